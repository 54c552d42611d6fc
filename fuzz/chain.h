/* A grammar-aware input shared by the expression fuzzers: the flat operator chain. Random
 * bytes almost never reach 50 000 operands of one operator (and inputs are capped at a few
 * KiB), yet that is the shape that used to crash `amk import` (issue 24). An input that starts
 * with CHAIN_MARK reads as: one byte choosing the operator, two bytes of count (doubled: up to
 * 131 070 operands), and the rest (at most 16 bytes) as the operand text, which is repeated
 * with the operator between. The expansion is capped at CHAIN_MAX_BYTES (a one-character
 * operand and operator still reach the full 131 070): a 2 MiB chain of comparisons took over libFuzzer's
 * 10 s timeout under the sanitizers in CI, and that was linear work, not a hang. */
#ifndef AMK_FUZZ_CHAIN_H
#define AMK_FUZZ_CHAIN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_MARK 0xC7
#define CHAIN_MAX_BYTES ((size_t)1 << 19)

/* Expands a chain input into *out (NUL-terminated, caller frees): 1, or 0 when data is not a
 * chain input (or on out of memory). ops is a NULL-terminated table. */
static int chain_expand(const uint8_t *data, size_t size, const char *const *ops, char **out)
{
    *out = NULL;
    if (size < 5 || data[0] != CHAIN_MARK)
        return 0;
    size_t nops = 0;
    while (ops[nops])
        nops++;
    const char *op = ops[data[1] % nops];
    size_t count = ((size_t)data[2] | (size_t)data[3] << 8) * 2 + 1;
    const uint8_t *term = data + 4;
    size_t tlen = size - 4 > 16 ? 16 : size - 4, olen = strlen(op);
    if (memchr(term, '\0', tlen))
        return 0;
    if (count * (tlen + olen + 2) > CHAIN_MAX_BYTES)
        count = CHAIN_MAX_BYTES / (tlen + olen + 2);
    char *s = malloc(count * (tlen + olen + 2) + 1);
    if (!s)
        return 0;
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        if (i) {
            s[at++] = ' ';
            memcpy(s + at, op, olen);
            at += olen;
            s[at++] = ' ';
        }
        memcpy(s + at, term, tlen);
        at += tlen;
    }
    s[at] = '\0';
    *out = s;
    return 1;
}

#endif
