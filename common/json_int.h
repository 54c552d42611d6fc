/* amk's strict JSON reader, in-tree only (not installed): every JSON document a user hands
 * amk (spec.json, configs, shapes, export databases) is parsed here, so a malformed file is
 * named with its line and column the same way wherever it is read. In common/ because
 * space_defs (specs, configs) and results (`amk lookup`'s database) both read JSON and
 * neither should reach into the other's internals for it. */
#ifndef AMK_JSON_INT_H
#define AMK_JSON_INT_H

#include "amk_common.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* Deepest nesting any JSON input may have (amk's documents stay under 12 levels). */
#define AMK_JSON_MAX_DEPTH 64
/* Parses len bytes of JSON (one document, white space around it) into *out (caller frees
 * with cJSON_Delete). AMK_EPARSE with "NAME:LINE:COL: malformed JSON near '...'", or naming a
 * NUL byte, a \u0000 escape or nesting past AMK_JSON_MAX_DEPTH. A number node written with a
 * fraction or exponent part (64.0, 1.28e2) keeps its text in valuestring: see
 * amk_json_integer_text. */
int amk_json_parse(const char *name, const char *text, size_t len, cJSON **out, amk_diag *d);
/* 1 when v is a number written as a JSON integer (no fraction or exponent part; a node
 * built in memory counts as one), else 0. */
int amk_json_integer_text(const cJSON *v);

#endif
