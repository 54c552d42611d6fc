/* libFuzzer target: parse arbitrary text as a spec expression against a fixed name table
 * and evaluate it on extreme slot values. Any crash, sanitizer report or inconsistency
 * (success without a value, an error code outside the documented set) is a bug. Inputs
 * starting with CHAIN_MARK are long flat operator chains (chain.h). */
#include "amk_space_defs.h"
#include "chain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"M", "N", "K", "BM", "BN", "elt", "max_threads", NULL};

static int resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], name, len))
            return i;
    return -1;
}

static const int64_t vectors[][7] = {
    {4096, 4096, 4096, 128, 64, 4, 1024},
    {0, 0, 0, 0, 0, 0, 0},
    {-1, -1, -1, -1, -1, -1, -1},
    {INT64_MAX, INT64_MIN, 1, -1, 63, 64, 2},
    {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const ops[] = {"+",  "-",  "*",  "/",  "%",  "<<", ">>", "&",  "|",
                                      "&&", "||", "==", "!=", "<",  "<=", ">",  ">=", "?",
                                      ":",  "? 1 :", NULL};
    char *src = NULL;
    if (!chain_expand(data, size, ops, &src)) {
        if (size > 4096 || !(src = malloc(size + 1)))
            return 0;
        memcpy(src, data, size);
        src[size] = '\0';
    }
    amk_expr *e = NULL;
    amk_diag d = {0};
    int rc = amk_expr_parse(src, resolve, NULL, &e, &d);
    if (rc == AMK_OK) {
        if (!e || strcmp(amk_expr_source(e), src) != 0)
            abort();
        unsigned char used[7] = {0};
        amk_expr_slots(e, used, 7);
        for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
            int64_t out = 0;
            int r = amk_expr_eval(e, vectors[v], &out, &d);
            if (r != AMK_OK && r != AMK_EDIVZERO && r != AMK_EOVERFLOW && r != AMK_EEXPR)
                abort();
            if (r != AMK_OK && d.code != r)
                abort();
            /* evaluation is a pure function of the slots */
            int64_t again = 0;
            if (amk_expr_eval(e, vectors[v], &again, NULL) != r || (r == AMK_OK && again != out))
                abort();
        }
        amk_expr_free(e);
    } else if (e != NULL || rc != d.code || d.msg[0] == '\0') {
        abort();
    }
    free(src);
    return 0;
}
