/* JSON input: one parser for every JSON document a user hands amk (configs, specs, export
 * databases). It says plainly what cJSON alone does not: where a syntax error is (line and
 * column), a NUL byte or a \u0000 escape (cJSON would cut the string there), nesting deeper
 * than amk's documents ever go, and, for number nodes, whether they were written as integers
 * (64) or with a fraction or exponent part (64.0, 1.28e2), which cJSON's double hides. */
#include "json_int.h"

#include <stdlib.h>
#include <string.h>

/* Line and column (1-based) of byte off. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int at(amk_diag *d, const char *name, const char *text, size_t off, const char *what)
{
    int line, col;
    line_col(text, off, &line, &col);
    return amk_diag_set(d, AMK_EPARSE, "%s:%d:%d: %s", name, line, col, what);
}

typedef struct num_tok {
    size_t off, len;
    int integer; /* no '.', 'e' or 'E' */
} num_tok;

/* One pass over the text outside cJSON: depth, NUL bytes and \u0000 escapes, and the number
 * tokens in text order (the order in which cJSON creates number nodes). Syntax errors are
 * left to cJSON. */
static int scan(const char *name, const char *text, size_t len, num_tok **toks, size_t *ntok,
                amk_diag *d)
{
    size_t cap = 0, n = 0;
    num_tok *t = NULL;
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\0') {
            free(t);
            return at(d, name, text, i, "malformed JSON: contains a NUL byte");
        }
        if (in_str) {
            if (c == '\\' && i + 1 < len) {
                if (text[i + 1] == 'u' && i + 5 < len && !memcmp(text + i + 2, "0000", 4)) {
                    free(t);
                    return at(d, name, text, i, "malformed JSON: a string contains a NUL "
                              "character (\\u0000)");
                }
                i++;
            } else if (c == '"') {
                in_str = 0;
            }
            continue;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > AMK_JSON_MAX_DEPTH) {
                free(t);
                char what[96];
                snprintf(what, sizeof what, "malformed JSON: nested deeper than %d levels",
                         AMK_JSON_MAX_DEPTH);
                return at(d, name, text, i, what);
            }
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i, dig = i + (c == '-');
            int integer = 1;
            if (dig + 1 < len && text[dig] == '0' && text[dig + 1] >= '0' &&
                text[dig + 1] <= '9') { /* cJSON reads 0128 as 128; JSON has no such number */
                free(t);
                return at(d, name, text, i, "malformed JSON: number with a leading zero");
            }
            while (j < len && strchr("0123456789+-.eE", text[j]) && text[j]) {
                if (text[j] == '.' || text[j] == 'e' || text[j] == 'E')
                    integer = 0;
                j++;
            }
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                num_tok *nt = realloc(t, nc * sizeof *nt);
                if (!nt) {
                    free(t);
                    return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", name);
                }
                t = nt;
                cap = nc;
            }
            t[n++] = (num_tok){i, j - i, integer};
            i = j - 1;
        }
    }
    *toks = t;
    *ntok = n;
    return AMK_OK;
}

/* Pre-order walk: number nodes meet their tokens in text order. A number written with a
 * fraction or exponent keeps that text in valuestring (freed by cJSON_Delete). */
static int tag_numbers(cJSON *j, const char *text, const num_tok *t, size_t n, size_t *k)
{
    for (; j; j = j->next) {
        if (cJSON_IsNumber(j)) {
            if (*k >= n)
                return AMK_EPARSE; /* cannot happen for text cJSON accepted */
            const num_tok *tok = &t[(*k)++];
            if (!tok->integer) {
                j->valuestring = cJSON_malloc(tok->len + 1);
                if (!j->valuestring)
                    return AMK_ENOMEM;
                memcpy(j->valuestring, text + tok->off, tok->len);
                j->valuestring[tok->len] = '\0';
            }
        }
        if (j->child) {
            int rc = tag_numbers(j->child, text, t, n, k);
            if (rc)
                return rc;
        }
    }
    return AMK_OK;
}

int amk_json_parse(const char *name, const char *text, size_t len, cJSON **out, amk_diag *d)
{
    *out = NULL;
    if (!name)
        name = "<json>";
    if (!text)
        return amk_diag_set(d, AMK_EINVAL, "%s: no text", name);
    num_tok *toks = NULL;
    size_t ntok = 0;
    int rc = scan(name, text, len, &toks, &ntok, d);
    if (rc)
        return rc;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    if (j) { /* only white space may follow the document */
        while (off < len && strchr(" \t\r\n", text[off]))
            off++;
        if (off < len) {
            cJSON_Delete(j);
            j = NULL;
        }
    }
    if (!j) {
        free(toks);
        if (off > len)
            off = len;
        char what[64];
        size_t k = 0;
        for (size_t i = off; i < len && k < 20 && text[i] != '\n'; i++)
            what[k++] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
        what[k] = '\0';
        while (k && strchr(" \t\r", what[k - 1]))
            k--; /* nothing but white space left: the document ended too early */
        what[k] = '\0';
        char msg[128];
        if (k)
            snprintf(msg, sizeof msg, "malformed JSON near '%s'", what);
        else
            snprintf(msg, sizeof msg, "malformed JSON (unexpected end of input)");
        return at(d, name, text, off, msg);
    }
    size_t used = 0;
    rc = tag_numbers(j, text, toks, ntok, &used);
    free(toks);
    if (rc) {
        cJSON_Delete(j);
        return amk_diag_set(d, rc, "%s: %s", name,
                            rc == AMK_ENOMEM ? "out of memory" : "JSON numbers out of step");
    }
    *out = j;
    return AMK_OK;
}

int amk_json_integer_text(const cJSON *v)
{
    return cJSON_IsNumber(v) && !v->valuestring;
}
