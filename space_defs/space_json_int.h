/* space_defs at the JSON edge, in-tree only (not installed): the functions that read or
 * write spec-level JSON as cJSON trees (configs, shapes, and amk's strict JSON reader) for
 * space_defs' own loaders and the CLI. The installed headers speak amk types and JSON text
 * (amk_config_parse, amk_config_params_json, ...); the cost model and the search never
 * include this. */
#ifndef AMK_SPACE_JSON_INT_H
#define AMK_SPACE_JSON_INT_H

#include "amk_space_defs.h"

#include <cjson/cJSON.h>

/* ---------- JSON input ------------------------------------------------------------------- */
/* Deepest nesting any JSON input may have (amk's documents stay under 12 levels). */
#define AMK_JSON_MAX_DEPTH 64
/* Parses len bytes of JSON (one document, white space around it) into *out (caller frees
 * with cJSON_Delete). AMK_EPARSE with "NAME:LINE:COL: malformed JSON near '...'", or naming a
 * NUL byte, a \u0000 escape or nesting past AMK_JSON_MAX_DEPTH. A number node written with a
 * fraction or exponent part (64.0, 1.28e2) keeps its text in valuestring: see
 * amk_json_integer_text. */
int amk_json_parse(const char *name, const char *text, size_t len, cJSON **out, amk_diag *d);
/* amk_fs_read_all (regular files only, size-capped) + amk_json_parse. */
int amk_json_read(const char *path, cJSON **out, amk_diag *d);
/* 1 when v is a number written as a JSON integer (no fraction or exponent part; a node
 * built in memory counts as one), else 0. */
int amk_json_integer_text(const cJSON *v);

/* ---------- shapes and configs as JSON ----------------------------------------------------- */
/* {"M":4096,...,"dtype":"f32"}: unspecified dims/dtype come from the default shape. */
int amk_shape_from_json(const amk_spec *s, const cJSON *obj, amk_shape *out, amk_diag *d);
cJSON *amk_shape_to_json(const amk_spec *s, const amk_shape *sh);
/* {"kernel":..,"shape":{..},"params":{..}}. Every param must be present, known, an integer
 * (or enum label) among its declared choices. Strings like "64 -DEVIL" are rejected. */
int amk_config_from_json(const amk_registry *r, const cJSON *obj, amk_config *out, amk_diag *d);
cJSON *amk_config_to_json(const amk_config *c);
/* The search space of a spec as `amk space` and `amk propose` print it: {"params": {NAME:
 * {choices, default, doc}}, "derived": {NAME: expr}, "restrictions": [expr, ...]}; each
 * expression as spec.json wrote it (a string, or an integer literal). NULL when out of
 * memory. */
cJSON *amk_space_to_json(const amk_spec *s);
/* A kernel as `amk list` prints it: {name, description, dims, dtypes, default_shape, shapes,
 * n_params, raw_size (product of the choice counts), dir}. NULL when out of memory. */
cJSON *amk_spec_summary_json(const amk_spec *s);

#endif
