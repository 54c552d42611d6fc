/* libFuzzer target: arbitrary text as a T1 (Python-subset) expression. Parsing, evaluation
 * and translation must never crash; a translation must parse as an amk expression (unless
 * it nests deeper than amk allows) and give Python's value wherever Python's evaluation
 * gives an integer, and fail wherever that evaluation fails on a zero divisor or 64 bits.
 * Inputs starting with CHAIN_MARK are long flat operator chains (chain.h). */
#include "amk_space_defs.h"
#include "space_defs_int.h"
#include "chain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"x", "y", "z", NULL};
static const int64_t vectors[][3] = {{3, -2, 7}, {0, 0, 0}, {-1, 64, 2}, {INT64_MAX, INT64_MIN, 1}};
static const int64_t *cur;

static int name_index(const char *name, size_t len)
{
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], name, len))
            return i;
    return -1;
}

static int lookup(void *ud, const char *name, py_val *out)
{
    (void)ud;
    int i = name_index(name, strlen(name));
    if (i < 0)
        return AMK_ENOENT;
    memset(out, 0, sizeof *out);
    out->kind = PY_V_INT;
    out->i = cur[i];
    return AMK_OK;
}

static int leaf(void *ud, const py_node *n, const char *src, amk_sb *sb, amk_diag *d)
{
    (void)ud;
    (void)src;
    (void)d;
    if (n->kind != PY_NAME || name_index(n->str, strlen(n->str)) < 0)
        return AMK_ENOENT;
    amk_sb_printf(sb, "%s", n->str);
    return AMK_OK;
}

static int resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    return name_index(name, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const ops[] = {"+",  "-",  "*",  "//", "/",   "%",  "<<", ">>", "&",
                                      "|",  "**", "<",  "<=", "==", "!=", "and", "or", NULL};
    char *src = NULL;
    if (chain_expand(data, size, ops, &src)) {
        size = strlen(src);
    } else {
        if (size > 2048 || !(src = malloc(size + 1)))
            return 0;
        memcpy(src, data, size);
        src[size] = '\0';
    }
    py_node *n = NULL;
    amk_diag d = {0};
    if (strlen(src) != size || amk_py_parse(src, &n, &d) != AMK_OK) {
        free(src);
        return 0;
    }
    for (int boolean = 0; boolean < 2; boolean++) {
        char *text = NULL;
        if (amk_py_to_amk(n, src, boolean, leaf, NULL, &text, &d) != AMK_OK)
            continue;
        amk_expr *e = NULL;
        int rc = amk_expr_parse(text, resolve, NULL, &e, &d);
        if (rc != AMK_OK && !strstr(d.msg, "too deeply nested") && rc != AMK_ENOMEM)
            abort(); /* the translator wrote text its own target language refuses */
        for (size_t v = 0; e && v < sizeof vectors / sizeof vectors[0]; v++) {
            cur = vectors[v];
            py_val pv = {0};
            int prc = amk_py_eval(n, src, lookup, NULL, &pv, &d);
            int64_t got = 0;
            int arc = amk_expr_eval(e, vectors[v], &got, NULL);
            if (prc == AMK_OK && pv.kind == PY_V_INT) {
                if (arc != AMK_OK || (boolean ? (got != 0) != (pv.i != 0) : got != pv.i))
                    abort();
            } else if (prc == AMK_EDIVZERO || prc == AMK_EOVERFLOW) {
                if (arc == AMK_OK)
                    abort();
            }
            amk_py_val_clear(&pv);
        }
        amk_expr_free(e);
        free(text);
    }
    amk_py_free(n);
    free(src);
    return 0;
}
