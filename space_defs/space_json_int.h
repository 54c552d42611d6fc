/* space_defs at the JSON edge, in-tree only (not installed): the functions that read or
 * write spec-level JSON as cJSON trees (configs, shapes) for space_defs' own loaders and the
 * CLI; amk's strict JSON reader they parse with is common/json_int.h. The installed headers
 * speak amk types and JSON text (amk_config_parse, amk_config_params_json, ...); the cost
 * model and the search never include this. */
#ifndef AMK_SPACE_JSON_INT_H
#define AMK_SPACE_JSON_INT_H

#include "amk_space_defs.h"
#include "json_int.h" /* the strict reader: amk_json_parse, amk_json_integer_text */

#include <cjson/cJSON.h>

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
