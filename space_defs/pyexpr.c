/* The small subset of Python that Kernel Tuner's T1 space files use (amk import): a parser
 * to a syntax tree, an evaluator with Python's integer semantics (value lists, and checks at
 * import time), and a translator to amk's integer expressions. Everything outside the
 * subset is an error naming the construct and its column; no Python is embedded. */
#include "space_defs_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_MAX_NEST 64
#define PY_MAX_ITEMS (1 << 20) /* longest list or range a value list may build */
#define PY_MAX_TEXT (64 * 1024) /* longest translation: `and`/`or` as numbers repeat operands */

typedef struct pyparser {
    const char *src;
    size_t len, pos;
    int nest;
    int err;
    amk_diag *d;
} pyparser;

static int pyerr(pyparser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int pyerr(pyparser *p, size_t at, const char *fmt, ...)
{
    if (p->err)
        return p->err;
    char m[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    p->err = m[0] == '!' ? AMK_ENOMEM : AMK_EEXPR;
    amk_diag_set(p->d, p->err, "%s at column %zu in '%s'", m[0] == '!' ? m + 1 : m, at + 1,
                 p->src);
    return p->err;
}

static py_node *node_new(pyparser *p, int kind, int op, size_t col)
{
    py_node *n = calloc(1, sizeof *n);
    if (!n) {
        pyerr(p, col, "%s", "!out of memory");
        return NULL;
    }
    n->kind = kind;
    n->op = op;
    n->col = col;
    return n;
}

static int add_kid(pyparser *p, py_node *n, py_node *kid)
{
    if (!kid)
        return p->err;
    py_node **k = realloc(n->kids, (size_t)(n->nkids + 1) * sizeof *k);
    int *ops = realloc(n->ops, (size_t)(n->nkids + 1) * sizeof *ops);
    if (k)
        n->kids = k;
    if (ops)
        n->ops = ops;
    if (!k || !ops) {
        amk_py_free(kid);
        return pyerr(p, n->col, "%s", "!out of memory");
    }
    n->ops[n->nkids] = 0;
    n->kids[n->nkids++] = kid;
    return 0;
}

void amk_py_free(py_node *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->nkids; i++)
        amk_py_free(n->kids[i]);
    free(n->kids);
    free(n->ops);
    free(n->str);
    free(n);
}

static void skip_ws(pyparser *p)
{
    while (p->pos < p->len && isspace((unsigned char)p->src[p->pos]))
        p->pos++;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_'; }

/* Is the next token the keyword kw (a whole word)? */
static int peek_kw(pyparser *p, const char *kw)
{
    skip_ws(p);
    size_t k = strlen(kw);
    return p->pos + k <= p->len && !memcmp(p->src + p->pos, kw, k) &&
           (p->pos + k == p->len || !is_ident_char((unsigned char)p->src[p->pos + k]));
}

/* Is the next token the operator op (not the start of a longer one)? */
static int peek_op(pyparser *p, const char *op)
{
    skip_ws(p);
    size_t k = strlen(op);
    if (p->pos + k > p->len || memcmp(p->src + p->pos, op, k) != 0)
        return 0;
    char next = p->pos + k < p->len ? p->src[p->pos + k] : '\0';
    static const char *const longer[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", NULL};
    for (const char *const *l = longer; *l; l++)
        if (k == 1 && op[0] == (*l)[0] && next == (*l)[1])
            return 0;
    if (k == 1 && (op[0] == '<' || op[0] == '>' || op[0] == '=' || op[0] == '!') && next == '=')
        return 0;
    return 1;
}

static const char *const keywords[] = {"and", "or", "not", "for", "in", "if", "else", "is",
                                       "lambda", "True", "False", "None", NULL};

static py_node *parse_expr(pyparser *p);
static py_node *parse_factor(pyparser *p);
static py_node *parse_or(pyparser *p);

static py_node *parse_number(pyparser *p)
{
    size_t start = p->pos;
    const char *s = p->src;
    uint64_t v = 0;
    while (p->pos < p->len && (isdigit((unsigned char)s[p->pos]) || s[p->pos] == '_')) {
        if (s[p->pos] != '_') {
            unsigned dig = (unsigned)(s[p->pos] - '0');
            if (v > ((uint64_t)INT64_MAX - dig) / 10) {
                pyerr(p, start, "%s", "integer literal out of 64-bit range");
                return NULL;
            }
            v = v * 10 + dig;
        }
        p->pos++;
    }
    if (p->pos < p->len && (s[p->pos] == '.' || s[p->pos] == 'e' || s[p->pos] == 'E')) {
        pyerr(p, start, "%s", "float literal (amk params and expressions are integers)");
        return NULL;
    }
    if (p->pos < p->len && is_ident_char((unsigned char)s[p->pos])) {
        pyerr(p, start, "%s", "number literal other than decimal (0x, 0o, 0b, 1j, ...)");
        return NULL;
    }
    if (p->pos - start > 1 && s[start] == '0' && v != 0) {
        pyerr(p, start, "%s", "integer literal with a leading zero");
        return NULL;
    }
    py_node *n = node_new(p, PY_NUM, 0, start);
    if (n)
        n->num = (int64_t)v;
    return n;
}

static py_node *parse_string(pyparser *p)
{
    size_t start = p->pos;
    char q = p->src[p->pos++];
    size_t b = p->pos;
    while (p->pos < p->len && p->src[p->pos] != q) {
        if (p->src[p->pos] == '\\') {
            pyerr(p, p->pos, "%s", "escape sequence in a string literal");
            return NULL;
        }
        p->pos++;
    }
    if (p->pos >= p->len) {
        pyerr(p, start, "%s", "unterminated string literal");
        return NULL;
    }
    py_node *n = node_new(p, PY_STR, 0, start);
    if (n && !(n->str = strndup(p->src + b, p->pos - b))) {
        amk_py_free(n);
        pyerr(p, start, "%s", "!out of memory");
        return NULL;
    }
    p->pos++;
    return n;
}

/* Comma-separated expressions up to `close`; the opening bracket is already consumed. */
static int parse_items(pyparser *p, py_node *n, char close)
{
    skip_ws(p);
    while (p->pos < p->len && p->src[p->pos] != close) {
        if (add_kid(p, n, parse_expr(p)))
            return p->err;
        skip_ws(p);
        if (p->pos < p->len && p->src[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            continue;
        }
        break;
    }
    if (p->pos >= p->len || p->src[p->pos] != close)
        return pyerr(p, p->pos, "expected '%c'", close);
    p->pos++;
    return 0;
}

/* [a, b, c] or [expr for NAME in iterable (if cond)] */
static py_node *parse_list(pyparser *p)
{
    size_t start = p->pos++;
    py_node *n = node_new(p, PY_LIST, 0, start);
    if (!n)
        return NULL;
    skip_ws(p);
    if (p->pos < p->len && p->src[p->pos] == ']') {
        p->pos++;
        return n;
    }
    if (add_kid(p, n, parse_expr(p)))
        goto fail;
    if (peek_kw(p, "for")) {
        n->kind = PY_COMP;
        p->pos += 3;
        skip_ws(p);
        size_t vb = p->pos;
        while (p->pos < p->len && is_ident_char((unsigned char)p->src[p->pos]))
            p->pos++;
        if (p->pos == vb || !is_ident_start((unsigned char)p->src[vb])) {
            pyerr(p, vb, "%s", "expected one loop variable after 'for' (tuple targets are not "
                  "supported)");
            goto fail;
        }
        if (!(n->str = strndup(p->src + vb, p->pos - vb))) {
            pyerr(p, vb, "%s", "!out of memory");
            goto fail;
        }
        if (!peek_kw(p, "in")) {
            pyerr(p, p->pos, "%s", "expected 'in' (tuple targets are not supported)");
            goto fail;
        }
        p->pos += 2;
        if (add_kid(p, n, parse_or(p)))
            goto fail;
        if (peek_kw(p, "if")) {
            p->pos += 2;
            if (add_kid(p, n, parse_or(p)))
                goto fail;
        }
        if (peek_kw(p, "for")) {
            pyerr(p, p->pos, "%s", "nested 'for' in a list comprehension");
            goto fail;
        }
        skip_ws(p);
        if (p->pos >= p->len || p->src[p->pos] != ']') {
            pyerr(p, p->pos, "%s", "expected ']' closing the list comprehension");
            goto fail;
        }
        p->pos++;
        return n;
    }
    skip_ws(p);
    if (p->pos < p->len && p->src[p->pos] == ',') {
        p->pos++;
        if (parse_items(p, n, ']'))
            goto fail;
        return n;
    }
    if (p->pos >= p->len || p->src[p->pos] != ']') {
        pyerr(p, p->pos, "%s", "expected ',' or ']'");
        goto fail;
    }
    p->pos++;
    return n;
fail:
    amk_py_free(n);
    return NULL;
}

static py_node *parse_atom(pyparser *p)
{
    skip_ws(p);
    if (p->pos >= p->len) {
        pyerr(p, p->pos, "%s", "expected a value");
        return NULL;
    }
    int c = (unsigned char)p->src[p->pos];
    size_t start = p->pos;
    if (c == '(') {
        p->pos++;
        if (++p->nest > PY_MAX_NEST) {
            pyerr(p, start, "%s", "expression too deeply nested");
            return NULL;
        }
        py_node *n = parse_expr(p);
        p->nest--;
        if (!n)
            return NULL;
        skip_ws(p);
        if (p->pos < p->len && p->src[p->pos] == ',') {
            amk_py_free(n);
            pyerr(p, p->pos, "%s", "tuple");
            return NULL;
        }
        if (p->pos >= p->len || p->src[p->pos] != ')') {
            amk_py_free(n);
            pyerr(p, p->pos, "%s", "expected ')'");
            return NULL;
        }
        p->pos++;
        return n;
    }
    if (c == '[') {
        if (++p->nest > PY_MAX_NEST) {
            pyerr(p, start, "%s", "expression too deeply nested");
            return NULL;
        }
        py_node *n = parse_list(p);
        p->nest--;
        return n;
    }
    if (c == '"' || c == '\'')
        return parse_string(p);
    if (isdigit(c))
        return parse_number(p);
    if (c == '.' && p->pos + 1 < p->len && isdigit((unsigned char)p->src[p->pos + 1])) {
        pyerr(p, start, "%s", "float literal (amk params and expressions are integers)");
        return NULL;
    }
    if (!is_ident_start(c)) {
        if (c == '{')
            pyerr(p, start, "%s", "dict or set display");
        else
            pyerr(p, start, "unexpected '%c'", isprint(c) ? c : '?');
        return NULL;
    }
    while (p->pos < p->len && is_ident_char((unsigned char)p->src[p->pos]))
        p->pos++;
    size_t nlen = p->pos - start;
    for (const char *const *k = keywords; *k; k++)
        if (strlen(*k) == nlen && !memcmp(*k, p->src + start, nlen)) {
            if (!strcmp(*k, "True") || !strcmp(*k, "False")) {
                py_node *n = node_new(p, PY_NUM, 0, start);
                if (n)
                    n->num = (*k)[0] == 'T';
                return n;
            }
            pyerr(p, start, "'%s' here", *k);
            return NULL;
        }
    py_node *n = node_new(p, PY_NAME, 0, start);
    if (!n)
        return NULL;
    if (!(n->str = strndup(p->src + start, nlen))) {
        amk_py_free(n);
        pyerr(p, start, "%s", "!out of memory");
        return NULL;
    }
    skip_ws(p);
    if (p->pos < p->len && p->src[p->pos] == '(') {
        n->kind = PY_CALL;
        p->pos++;
        if (parse_items(p, n, ')')) {
            amk_py_free(n);
            return NULL;
        }
    } else if (p->pos < p->len && p->src[p->pos] == '[') {
        n->kind = PY_INDEX;
        p->pos++;
        if (add_kid(p, n, parse_expr(p))) {
            amk_py_free(n);
            return NULL;
        }
        skip_ws(p);
        if (p->pos >= p->len || p->src[p->pos] != ']') {
            amk_py_free(n);
            pyerr(p, p->pos, "%s", "expected ']' (slices are not supported)");
            return NULL;
        }
        p->pos++;
    } else if (p->pos < p->len && p->src[p->pos] == '.') {
        amk_py_free(n);
        pyerr(p, p->pos, "%s", "attribute access");
        return NULL;
    }
    return n;
}

/* power: atom ['**' factor] (right-associative, binds tighter than a unary minus on its
 * left: -2**2 is -(2**2)). */
static py_node *parse_power(pyparser *p)
{
    py_node *l = parse_atom(p);
    if (!l || !peek_op(p, "**"))
        return l;
    size_t at = p->pos;
    p->pos += 2;
    py_node *n = node_new(p, PY_BIN, PY_POW, at);
    if (!n || add_kid(p, n, l) || add_kid(p, n, parse_factor(p))) {
        if (!n)
            amk_py_free(l);
        amk_py_free(n);
        return NULL;
    }
    return n;
}

static py_node *parse_factor(pyparser *p)
{
    skip_ws(p);
    size_t at = p->pos;
    int op = -1;
    if (peek_op(p, "-"))
        op = PY_NEG;
    else if (peek_op(p, "+"))
        op = PY_POS;
    else if (peek_op(p, "~")) {
        pyerr(p, at, "%s", "operator '~'");
        return NULL;
    }
    if (op < 0)
        return parse_power(p);
    p->pos++;
    if (++p->nest > PY_MAX_NEST) {
        pyerr(p, at, "%s", "expression too deeply nested");
        return NULL;
    }
    py_node *n = node_new(p, PY_UNARY, op, at);
    if (n && add_kid(p, n, parse_factor(p))) {
        amk_py_free(n);
        n = NULL;
    }
    p->nest--;
    return n;
}

typedef struct pybinop {
    const char *tok;
    int op;
} pybinop;

/* Binary levels, tightest last (Python precedence). */
static const pybinop lv_bor[] = {{"|", PY_BOR}, {NULL, 0}};
static const pybinop lv_band[] = {{"&", PY_BAND}, {NULL, 0}};
static const pybinop lv_shift[] = {{"<<", PY_SHL}, {">>", PY_SHR}, {NULL, 0}};
static const pybinop lv_arith[] = {{"+", PY_ADD}, {"-", PY_SUB}, {NULL, 0}};
static const pybinop lv_term[] = {{"//", PY_FLOORDIV}, {"*", PY_MUL}, {"/", PY_DIV},
                                  {"%", PY_MOD}, {NULL, 0}};
static const pybinop *const levels[] = {lv_bor, lv_band, lv_shift, lv_arith, lv_term};
#define NLEVELS ((int)(sizeof levels / sizeof levels[0]))

static py_node *parse_binary(pyparser *p, int level)
{
    if (level == NLEVELS)
        return parse_factor(p);
    py_node *l = parse_binary(p, level + 1);
    while (l) {
        if (level == 0 && peek_op(p, "^")) {
            pyerr(p, p->pos, "%s", "operator '^'");
            break;
        }
        if (level == NLEVELS - 1 && peek_op(p, "@")) {
            pyerr(p, p->pos, "%s", "operator '@'");
            break;
        }
        const pybinop *hit = NULL;
        for (const pybinop *b = levels[level]; b->tok; b++)
            if (peek_op(p, b->tok)) {
                hit = b;
                break;
            }
        if (!hit)
            return l;
        size_t at = p->pos;
        p->pos += strlen(hit->tok);
        py_node *n = node_new(p, PY_BIN, hit->op, at);
        if (!n)
            break;
        if (add_kid(p, n, l)) {
            free(n);
            return NULL;
        }
        l = n;
        if (add_kid(p, n, parse_binary(p, level + 1)))
            break;
    }
    amk_py_free(l);
    return NULL;
}

static int peek_cmp(pyparser *p, int *op, size_t *toklen)
{
    static const struct {
        const char *tok;
        int op;
    } cmps[] = {{"<=", PY_LE}, {">=", PY_GE}, {"==", PY_EQ}, {"!=", PY_NE},
                {"<", PY_LT},  {">", PY_GT},  {NULL, 0}};
    for (int i = 0; cmps[i].tok; i++)
        if (peek_op(p, cmps[i].tok)) {
            *op = cmps[i].op;
            *toklen = strlen(cmps[i].tok);
            return 1;
        }
    return 0;
}

/* a < b <= c ...: one PY_CMP node with n operands and n-1 operators (ops[1..]). */
static py_node *parse_comparison(pyparser *p)
{
    py_node *l = parse_binary(p, 0);
    int op;
    size_t k;
    if (!l)
        return NULL;
    if (peek_kw(p, "in") || peek_kw(p, "is") || peek_kw(p, "not")) {
        size_t at = p->pos;
        amk_py_free(l);
        pyerr(p, at, "%s", "operator 'in' / 'is' / 'not in' (only < <= > >= == != compare)");
        return NULL;
    }
    if (!peek_cmp(p, &op, &k))
        return l;
    py_node *n = node_new(p, PY_CMP, 0, l->col);
    if (!n || add_kid(p, n, l)) {
        if (!n)
            amk_py_free(l);
        amk_py_free(n);
        return NULL;
    }
    while (peek_cmp(p, &op, &k)) {
        size_t at = p->pos;
        p->pos += k;
        if (add_kid(p, n, parse_binary(p, 0))) {
            amk_py_free(n);
            return NULL;
        }
        n->ops[n->nkids - 1] = op;
        (void)at;
    }
    if (peek_kw(p, "in") || peek_kw(p, "is")) {
        pyerr(p, p->pos, "%s", "operator 'in' / 'is'");
        amk_py_free(n);
        return NULL;
    }
    return n;
}

static py_node *parse_not(pyparser *p)
{
    if (!peek_kw(p, "not"))
        return parse_comparison(p);
    size_t at = p->pos;
    p->pos += 3;
    if (++p->nest > PY_MAX_NEST) {
        pyerr(p, at, "%s", "expression too deeply nested");
        return NULL;
    }
    py_node *n = node_new(p, PY_NOT, 0, at);
    if (n && add_kid(p, n, parse_not(p))) {
        amk_py_free(n);
        n = NULL;
    }
    p->nest--;
    return n;
}

static py_node *parse_boolop(pyparser *p, const char *kw, int op, py_node *(*sub)(pyparser *))
{
    py_node *l = sub(p);
    if (!l || !peek_kw(p, kw))
        return l;
    py_node *n = node_new(p, PY_BOOL, op, p->pos);
    if (!n || add_kid(p, n, l)) {
        if (!n)
            amk_py_free(l);
        amk_py_free(n);
        return NULL;
    }
    while (peek_kw(p, kw)) {
        p->pos += strlen(kw);
        if (add_kid(p, n, sub(p))) {
            amk_py_free(n);
            return NULL;
        }
    }
    return n;
}

static py_node *parse_and(pyparser *p) { return parse_boolop(p, "and", PY_AND, parse_not); }
static py_node *parse_or(pyparser *p) { return parse_boolop(p, "or", PY_OR, parse_and); }

static py_node *parse_expr(pyparser *p)
{
    py_node *n = parse_or(p);
    if (n && peek_kw(p, "if")) {
        pyerr(p, p->pos, "%s", "conditional expression 'x if c else y'");
        amk_py_free(n);
        return NULL;
    }
    if (n && peek_kw(p, "lambda")) {
        pyerr(p, p->pos, "%s", "lambda");
        amk_py_free(n);
        return NULL;
    }
    return n;
}

int amk_py_parse(const char *src, py_node **out, amk_diag *d)
{
    *out = NULL;
    pyparser p = {.src = src, .len = strlen(src), .d = d};
    skip_ws(&p);
    if (p.pos >= p.len)
        return amk_diag_set(d, AMK_EEXPR, "empty expression '%s'", src);
    py_node *n = parse_expr(&p);
    if (n) {
        skip_ws(&p);
        if (p.pos < p.len) {
            if (p.src[p.pos] == ':' || p.src[p.pos] == '=')
                pyerr(&p, p.pos, "'%c' (slices, assignments, walrus)", p.src[p.pos]);
            else if (p.src[p.pos] == ',')
                pyerr(&p, p.pos, "%s", "tuple");
            else
                pyerr(&p, p.pos, "%s", "expected an operator or end of expression");
        }
    }
    if (p.err) {
        amk_py_free(n);
        return p.err;
    }
    *out = n;
    return AMK_OK;
}

/* ---------- evaluation (Python semantics on 64-bit integers) ------------------------------ */

void amk_py_val_clear(py_val *v)
{
    if (v->strs)
        for (size_t i = 0; i < v->n; i++)
            free(v->strs[i]);
    free(v->strs);
    free(v->ints);
    memset(v, 0, sizeof *v);
}

typedef struct evalctx {
    const char *src;
    amk_py_lookup lookup;
    void *ud;
    const char *var; /* comprehension variable and its value */
    int64_t var_val;
    int bound;
    amk_diag *d;
} evalctx;

static int everr(evalctx *e, const py_node *n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int everr(evalctx *e, const py_node *n, int code, const char *fmt, ...)
{
    char m[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return amk_diag_set(e->d, code, "%s at column %zu in '%s'", m, n->col + 1, e->src);
}

static int eval_node(evalctx *e, const py_node *n, py_val *out);

static int eval_int(evalctx *e, const py_node *n, int64_t *out)
{
    py_val v = {0};
    int rc = eval_node(e, n, &v);
    if (rc)
        return rc;
    if (v.kind != PY_V_INT) {
        amk_py_val_clear(&v);
        return everr(e, n, AMK_EEXPR, "%s", "expected an integer here, got a list or string");
    }
    *out = v.i;
    return AMK_OK;
}

static int list_push(evalctx *e, const py_node *at, py_val *l, int64_t x, const char *s)
{
    if (l->n >= PY_MAX_ITEMS)
        return everr(e, at, AMK_EEXPR, "list longer than %d items", PY_MAX_ITEMS);
    if (s) {
        char **a = realloc(l->strs, (l->n + 1) * sizeof *a);
        char *c = strdup(s);
        if (a)
            l->strs = a;
        if (!a || !c) {
            free(c);
            return everr(e, at, AMK_ENOMEM, "%s", "out of memory");
        }
        a[l->n++] = c;
    } else {
        int64_t *a = realloc(l->ints, (l->n + 1) * sizeof *a);
        if (!a)
            return everr(e, at, AMK_ENOMEM, "%s", "out of memory");
        l->ints = a;
        a[l->n++] = x;
    }
    return AMK_OK;
}

/* Python's integer binary operators; / only when exact (Python would give a float). */
static int int_binop(evalctx *e, const py_node *n, int64_t a, int64_t b, int64_t *r)
{
    int rc = AMK_OK;
    switch (n->op) {
    case PY_ADD: rc = __builtin_add_overflow(a, b, r) ? AMK_EOVERFLOW : AMK_OK; break;
    case PY_SUB: rc = __builtin_sub_overflow(a, b, r) ? AMK_EOVERFLOW : AMK_OK; break;
    case PY_MUL: rc = __builtin_mul_overflow(a, b, r) ? AMK_EOVERFLOW : AMK_OK; break;
    case PY_DIV:
        if (b == 0)
            return everr(e, n, AMK_EDIVZERO, "%s", "division by zero");
        if ((a == INT64_MIN && b == -1) || a % b != 0)
            return everr(e, n, AMK_EEXPR, "'/' gives the float %lld/%lld (amk computes in "
                         "integers; use '//' if floor division is meant)", (long long)a,
                         (long long)b);
        *r = a / b;
        break;
    case PY_FLOORDIV: case PY_MOD: case PY_POW: {
        /* the same code amk's expressions run: one definition of each operator */
        static const int ops[] = {[PY_FLOORDIV] = AMK__OP_FLOORDIV, [PY_MOD] = AMK__OP_FLOORMOD,
                                  [PY_POW] = AMK__OP_POW};
        amk_expr *t = malloc(sizeof *t + 3 * sizeof(amk__insn));
        if (!t)
            return everr(e, n, AMK_ENOMEM, "%s", "out of memory");
        t->n = 3;
        t->maxdepth = 2;
        t->src = NULL;
        t->code[0] = (amk__insn){.op = AMK__OP_CONST, .v = a};
        t->code[1] = (amk__insn){.op = AMK__OP_CONST, .v = b};
        t->code[2] = (amk__insn){.op = ops[n->op]};
        rc = amk__expr_run(t, NULL, r, NULL);
        free(t);
        if (rc == AMK_EDIVZERO)
            return everr(e, n, rc, "%s", n->op == PY_MOD ? "modulo by zero" : "division by zero");
        if (rc == AMK_EEXPR)
            return everr(e, n, rc, "'**' with the negative exponent %lld gives a float",
                         (long long)b);
        break;
    }
    case PY_SHL: /* amk's <<: a negative count (Python raises) or a result outside 64 bits
                    (Python grows) is an error, which makes the config invalid */
        if (b < 0 || b > 63)
            rc = AMK_EOVERFLOW;
        else if (b == 63)
            rc = a == 0 ? (*r = 0, AMK_OK) : a == -1 ? (*r = INT64_MIN, AMK_OK) : AMK_EOVERFLOW;
        else if (a > (INT64_MAX >> b) || a < (INT64_MIN >> b))
            rc = AMK_EOVERFLOW;
        else
            *r = (int64_t)((uint64_t)a << b);
        break;
    case PY_SHR:
        if (b < 0)
            return everr(e, n, AMK_EOVERFLOW, "%s", "negative shift count");
        *r = b > 63 ? (a < 0 ? -1 : 0) : (a >= 0 ? a >> b : ~(~a >> b));
        break;
    case PY_BAND: *r = a & b; break;
    case PY_BOR: *r = a | b; break;
    default: return everr(e, n, AMK_EEXPR, "%s", "operator");
    }
    if (rc == AMK_EOVERFLOW)
        return everr(e, n, rc, "%s", "result outside 64-bit integers");
    return rc;
}

static int cmp_true(int op, int64_t a, int64_t b)
{
    switch (op) {
    case PY_LT: return a < b;
    case PY_LE: return a <= b;
    case PY_GT: return a > b;
    case PY_GE: return a >= b;
    case PY_EQ: return a == b;
    default: return a != b;
    }
}

static int eval_call(evalctx *e, const py_node *n, py_val *out)
{
    const char *f = n->str;
    if (!strcmp(f, "range")) {
        int64_t a[3] = {0, 0, 1};
        if (n->nkids < 1 || n->nkids > 3)
            return everr(e, n, AMK_EEXPR, "%s", "range() takes 1 to 3 arguments");
        for (int i = 0; i < n->nkids; i++) {
            int rc = eval_int(e, n->kids[i], &a[n->nkids == 1 ? 1 : i]);
            if (rc)
                return rc;
        }
        if (a[2] == 0)
            return everr(e, n, AMK_EEXPR, "%s", "range() step must not be zero");
        out->kind = PY_V_LIST;
        for (int64_t x = a[0]; a[2] > 0 ? x < a[1] : x > a[1];) {
            int rc = list_push(e, n, out, x, NULL);
            if (rc)
                return rc;
            if (__builtin_add_overflow(x, a[2], &x))
                break;
        }
        out->is_range = 1;
        return AMK_OK;
    }
    if (!strcmp(f, "list")) {
        if (n->nkids != 1)
            return everr(e, n, AMK_EEXPR, "%s", "list() takes one argument here");
        int rc = eval_node(e, n->kids[0], out);
        if (rc)
            return rc;
        if (out->kind != PY_V_LIST)
            return everr(e, n, AMK_EEXPR, "%s", "list() of something that is not a list or range");
        out->is_range = 0;
        return AMK_OK;
    }
    if (!strcmp(f, "min") || !strcmp(f, "max")) {
        int want_max = f[1] == 'a';
        py_val all = {0};
        all.kind = PY_V_LIST;
        for (int i = 0; i < n->nkids; i++) {
            py_val v = {0};
            int rc = eval_node(e, n->kids[i], &v);
            for (size_t k = 0; !rc && v.kind == PY_V_LIST && !v.strs && k < v.n; k++)
                rc = list_push(e, n, &all, v.ints[k], NULL);
            if (!rc && v.kind == PY_V_INT)
                rc = list_push(e, n, &all, v.i, NULL);
            else if (!rc && (v.kind != PY_V_LIST || v.strs))
                rc = everr(e, n->kids[i], AMK_EEXPR, "%s() of a string", f);
            amk_py_val_clear(&v);
            if (rc) {
                amk_py_val_clear(&all);
                return rc;
            }
        }
        if (all.n == 0) {
            amk_py_val_clear(&all);
            return everr(e, n, AMK_EEXPR, "%s() of nothing", f);
        }
        int64_t r = all.ints[0];
        for (size_t k = 1; k < all.n; k++)
            if (want_max ? all.ints[k] > r : all.ints[k] < r)
                r = all.ints[k];
        amk_py_val_clear(&all);
        out->kind = PY_V_INT;
        out->i = r;
        return AMK_OK;
    }
    return everr(e, n, AMK_EEXPR, "function '%s' (range, list, min and max are supported)", f);
}

static int eval_node(evalctx *e, const py_node *n, py_val *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    switch (n->kind) {
    case PY_NUM:
        out->kind = PY_V_INT;
        out->i = n->num;
        return AMK_OK;
    case PY_STR:
        out->kind = PY_V_STR;
        return list_push(e, n, out, 0, n->str) ? AMK_ENOMEM : AMK_OK;
    case PY_NAME:
        if (e->bound && !strcmp(n->str, e->var)) {
            out->kind = PY_V_INT;
            out->i = e->var_val;
            return AMK_OK;
        }
        if (e->lookup && e->lookup(e->ud, n->str, out) == AMK_OK)
            return AMK_OK;
        return everr(e, n, AMK_EEXPR, "unknown name '%s'", n->str);
    case PY_INDEX: {
        py_val base = {0};
        int64_t k = 0;
        if (!e->lookup || e->lookup(e->ud, n->str, &base) != AMK_OK)
            return everr(e, n, AMK_EEXPR, "unknown name '%s'", n->str);
        if ((rc = eval_int(e, n->kids[0], &k))) {
            amk_py_val_clear(&base);
            return rc;
        }
        if (base.kind != PY_V_LIST || base.strs || k < -(int64_t)base.n || k >= (int64_t)base.n) {
            amk_py_val_clear(&base);
            return everr(e, n, AMK_EEXPR, "index %lld of '%s' is out of range or not of a list "
                         "of integers", (long long)k, n->str);
        }
        out->kind = PY_V_INT;
        out->i = base.ints[k < 0 ? (int64_t)base.n + k : k];
        amk_py_val_clear(&base);
        return AMK_OK;
    }
    case PY_LIST:
        out->kind = PY_V_LIST;
        for (int i = 0; i < n->nkids; i++) {
            py_val v = {0};
            if ((rc = eval_node(e, n->kids[i], &v)))
                return rc;
            if (v.kind == PY_V_LIST) {
                amk_py_val_clear(&v);
                return everr(e, n->kids[i], AMK_EEXPR, "%s", "nested list");
            }
            if (i > 0 && (v.kind == PY_V_STR) != (out->strs != NULL)) {
                amk_py_val_clear(&v);
                return everr(e, n->kids[i], AMK_EEXPR, "%s", "list mixing strings and integers");
            }
            rc = list_push(e, n, out, v.i, v.kind == PY_V_STR ? v.strs[0] : NULL);
            amk_py_val_clear(&v);
            if (rc)
                return rc;
        }
        return AMK_OK;
    case PY_COMP: {
        py_val it = {0};
        if ((rc = eval_node(e, n->kids[1], &it)))
            return rc;
        if (it.kind != PY_V_LIST || it.strs) {
            amk_py_val_clear(&it);
            return everr(e, n->kids[1], AMK_EEXPR, "%s", "a comprehension must iterate over a "
                         "list or range of integers");
        }
        evalctx inner = *e;
        inner.var = n->str;
        inner.bound = 1;
        out->kind = PY_V_LIST;
        for (size_t k = 0; k < it.n; k++) {
            inner.var_val = it.ints[k];
            if (n->nkids > 2) {
                int64_t keep = 0;
                if ((rc = eval_int(&inner, n->kids[2], &keep)))
                    break;
                if (!keep)
                    continue;
            }
            py_val v = {0};
            if ((rc = eval_node(&inner, n->kids[0], &v)))
                break;
            if (v.kind == PY_V_LIST || (out->n > 0 && (v.kind == PY_V_STR) != (out->strs != NULL))) {
                amk_py_val_clear(&v);
                rc = everr(e, n->kids[0], AMK_EEXPR, "%s", "comprehension items must all be "
                           "integers or all strings");
                break;
            }
            rc = list_push(e, n, out, v.i, v.kind == PY_V_STR ? v.strs[0] : NULL);
            amk_py_val_clear(&v);
            if (rc)
                break;
        }
        amk_py_val_clear(&it);
        return rc;
    }
    case PY_CALL:
        return eval_call(e, n, out);
    case PY_UNARY: {
        int64_t a = 0;
        if ((rc = eval_int(e, n->kids[0], &a)))
            return rc;
        if (n->op == PY_NEG && a == INT64_MIN)
            return everr(e, n, AMK_EOVERFLOW, "%s", "result outside 64-bit integers");
        out->kind = PY_V_INT;
        out->i = n->op == PY_NEG ? -a : a;
        return AMK_OK;
    }
    case PY_NOT: {
        int64_t a = 0;
        if ((rc = eval_int(e, n->kids[0], &a)))
            return rc;
        out->kind = PY_V_INT;
        out->i = !a;
        return AMK_OK;
    }
    case PY_BOOL: {
        /* Python's value semantics: `a or b` is a when a is true, else b */
        int64_t a = 0;
        for (int i = 0; i < n->nkids; i++) {
            if ((rc = eval_int(e, n->kids[i], &a)))
                return rc;
            if (n->op == PY_AND ? !a : a)
                break;
        }
        out->kind = PY_V_INT;
        out->i = a;
        return AMK_OK;
    }
    case PY_CMP: {
        int64_t a = 0, b = 0;
        if ((rc = eval_int(e, n->kids[0], &a)))
            return rc;
        out->kind = PY_V_INT;
        out->i = 1;
        for (int i = 1; i < n->nkids; i++) {
            if ((rc = eval_int(e, n->kids[i], &b)))
                return rc;
            if (!cmp_true(n->ops[i], a, b)) {
                out->i = 0;
                break;
            }
            a = b;
        }
        return AMK_OK;
    }
    case PY_BIN: {
        py_val l = {0}, r = {0};
        if ((rc = eval_node(e, n->kids[0], &l)))
            return rc;
        if ((rc = eval_node(e, n->kids[1], &r))) {
            amk_py_val_clear(&l);
            return rc;
        }
        if (n->op == PY_ADD && l.kind == PY_V_LIST && r.kind == PY_V_LIST && !l.is_range &&
            !r.is_range) {
            if (l.n && r.n && (l.strs != NULL) != (r.strs != NULL))
                rc = everr(e, n, AMK_EEXPR, "%s", "list mixing strings and integers");
            for (size_t k = 0; !rc && k < r.n; k++)
                rc = list_push(e, n, &l, r.strs ? 0 : r.ints[k], r.strs ? r.strs[k] : NULL);
            amk_py_val_clear(&r);
            if (rc) {
                amk_py_val_clear(&l);
                return rc;
            }
            *out = l;
            return AMK_OK;
        }
        if (l.kind != PY_V_INT || r.kind != PY_V_INT) {
            int lr = l.is_range || r.is_range;
            amk_py_val_clear(&l);
            amk_py_val_clear(&r);
            return everr(e, n, AMK_EEXPR, "%s", lr ? "a range in arithmetic (wrap it in list())"
                         : "operator on a list or string (only list + list is supported)");
        }
        out->kind = PY_V_INT;
        return int_binop(e, n, l.i, r.i, &out->i);
    }
    default:
        return everr(e, n, AMK_EEXPR, "%s", "construct");
    }
}

int amk_py_eval(const py_node *n, const char *src, amk_py_lookup lookup, void *ud, py_val *out,
                amk_diag *d)
{
    evalctx e = {.src = src, .lookup = lookup, .ud = ud, .d = d};
    int rc = eval_node(&e, n, out);
    if (rc)
        amk_py_val_clear(out);
    return rc;
}

/* ---------- translation to amk's expression language ------------------------------------ */

/* amk (C) precedence levels, loosest first. */
enum { P_TERN = 1, P_OR, P_AND, P_BOR, P_BAND, P_EQ, P_REL, P_SHIFT, P_ADD, P_MUL, P_UNARY,
       P_ATOM };

typedef struct trctx {
    const char *src;
    amk_py_leaf leaf;
    void *ud;
    amk_diag *d;
} trctx;

static int tr_node(trctx *t, const py_node *n, int boolean, amk_sb *sb, int *prec);

/* Emits n; parenthesised when its precedence is below min. */
static int tr_at(trctx *t, const py_node *n, int boolean, int min, amk_sb *sb)
{
    amk_sb inner = {0};
    int prec = P_ATOM;
    int rc = tr_node(t, n, boolean, &inner, &prec);
    if (!rc) {
        if (inner.oom)
            rc = amk_diag_set(t->d, AMK_ENOMEM, "out of memory");
        else if (prec < min)
            amk_sb_printf(sb, "(%s)", inner.p);
        else
            amk_sb_printf(sb, "%s", inner.p);
    }
    amk_sb_free(&inner);
    return rc;
}

static int trerr(trctx *t, const py_node *n, const char *what)
{
    return amk_diag_set(t->d, AMK_EEXPR, "%s at column %zu in '%s'", what, n->col + 1, t->src);
}

static int tr_node(trctx *t, const py_node *n, int boolean, amk_sb *sb, int *prec)
{
    int rc;
    if (t->leaf && (n->kind == PY_NAME || n->kind == PY_INDEX || n->kind == PY_CALL)) {
        rc = t->leaf(t->ud, n, t->src, sb, t->d);
        if (rc != AMK_ENOENT) {
            *prec = P_ATOM;
            return rc;
        }
    }
    switch (n->kind) {
    case PY_NUM:
        amk_sb_printf(sb, "%lld", (long long)n->num);
        *prec = P_ATOM;
        return AMK_OK;
    case PY_NAME:
        return trerr(t, n, "unknown name");
    case PY_STR:
        return trerr(t, n, "string in an integer expression");
    case PY_LIST: case PY_COMP:
        return trerr(t, n, "list in an integer expression");
    case PY_INDEX:
        return trerr(t, n, "subscript");
    case PY_CALL:
        if ((!strcmp(n->str, "min") || !strcmp(n->str, "max")) && n->nkids >= 2) {
            /* min(a, b, c) -> min(min(a, b), c) */
            for (int i = 0; i < n->nkids - 1; i++)
                amk_sb_printf(sb, "%s(", n->str);
            if ((rc = tr_at(t, n->kids[0], 0, P_TERN, sb)))
                return rc;
            for (int i = 1; i < n->nkids; i++) {
                amk_sb_printf(sb, ", ");
                if ((rc = tr_at(t, n->kids[i], 0, P_TERN, sb)))
                    return rc;
                amk_sb_printf(sb, ")");
            }
            *prec = P_ATOM;
            return AMK_OK;
        }
        return trerr(t, n, "function call (min and max of two or more integers are supported "
                     "in conditions)");
    case PY_UNARY:
        if (n->op == PY_POS)
            return tr_node(t, n->kids[0], 0, sb, prec);
        amk_sb_printf(sb, "-");
        *prec = P_UNARY;
        return tr_at(t, n->kids[0], 0, P_UNARY, sb);
    case PY_NOT:
        amk_sb_printf(sb, "!");
        *prec = P_UNARY;
        return tr_at(t, n->kids[0], 1, P_UNARY, sb);
    case PY_BOOL:
        if (boolean) {
            /* truth value only: && and || give 0/1, the same truth as Python's operands */
            int p = n->op == PY_AND ? P_AND : P_OR;
            for (int i = 0; i < n->nkids; i++) {
                if (i)
                    amk_sb_printf(sb, " %s ", n->op == PY_AND ? "&&" : "||");
                if ((rc = tr_at(t, n->kids[i], 1, p + (i > 0), sb)))
                    return rc;
            }
            *prec = p;
            return AMK_OK;
        }
        /* as a number Python's `a and b` is a ? b : a, `a or b` is a ? a : b (left fold) */
        {
            amk_sb acc = {0};
            if ((rc = tr_at(t, n->kids[0], 0, P_OR, &acc))) {
                amk_sb_free(&acc);
                return rc;
            }
            for (int i = 1; i < n->nkids; i++) {
                amk_sb b = {0}, next = {0};
                if ((rc = tr_at(t, n->kids[i], 0, P_TERN, &b))) {
                    amk_sb_free(&acc);
                    amk_sb_free(&b);
                    return rc;
                }
                if (n->op == PY_AND)
                    amk_sb_printf(&next, "(%s) ? (%s) : (%s)", acc.p, b.p, acc.p);
                else
                    amk_sb_printf(&next, "(%s) ? (%s) : (%s)", acc.p, acc.p, b.p);
                amk_sb_free(&acc);
                amk_sb_free(&b);
                acc = next;
                /* each step repeats the fold so far: a long chain doubles per operand */
                if (acc.len > PY_MAX_TEXT) {
                    amk_sb_free(&acc);
                    return amk_diag_set(t->d, AMK_EEXPR, "'%s' used as a number at column %zu:"
                                        " its translation exceeds %d bytes (each operand "
                                        "repeats the ones before it)",
                                        n->op == PY_AND ? "and" : "or", n->col + 1, PY_MAX_TEXT);
                }
            }
            amk_sb_printf(sb, "%s", acc.p ? acc.p : "");
            amk_sb_free(&acc);
            *prec = P_TERN;
            return AMK_OK;
        }
    case PY_CMP: {
        /* a < b <= c -> a < b && b <= c (b has no side effect: evaluating it twice is
         * exact) */
        static const char *const tok[] = {[PY_LT] = "<", [PY_LE] = "<=", [PY_GT] = ">",
                                          [PY_GE] = ">=", [PY_EQ] = "==", [PY_NE] = "!="};
        for (int i = 1; i < n->nkids; i++) {
            int p = n->ops[i] == PY_EQ || n->ops[i] == PY_NE ? P_EQ : P_REL;
            if (i > 1)
                amk_sb_printf(sb, " && ");
            if ((rc = tr_at(t, n->kids[i - 1], 0, p + 1, sb)))
                return rc;
            amk_sb_printf(sb, " %s ", tok[n->ops[i]]);
            if ((rc = tr_at(t, n->kids[i], 0, p + 1, sb)))
                return rc;
            *prec = n->nkids > 2 ? P_AND : p;
        }
        return AMK_OK;
    }
    case PY_BIN: {
        const char *fn = n->op == PY_FLOORDIV ? "floordiv" : n->op == PY_MOD ? "floormod"
                         : n->op == PY_POW ? "pow" : NULL;
        if (fn) {
            amk_sb_printf(sb, "%s(", fn);
            if ((rc = tr_at(t, n->kids[0], 0, P_TERN, sb)))
                return rc;
            amk_sb_printf(sb, ", ");
            if ((rc = tr_at(t, n->kids[1], 0, P_TERN, sb)))
                return rc;
            amk_sb_printf(sb, ")");
            *prec = P_ATOM;
            return AMK_OK;
        }
        static const struct {
            const char *tok;
            int prec;
        } bin[] = {[PY_ADD] = {"+", P_ADD},   [PY_SUB] = {"-", P_ADD},
                   [PY_MUL] = {"*", P_MUL},   [PY_DIV] = {"/", P_MUL},
                   [PY_SHL] = {"<<", P_SHIFT}, [PY_SHR] = {">>", P_SHIFT},
                   [PY_BAND] = {"&", P_BAND}, [PY_BOR] = {"|", P_BOR}};
        int p = bin[n->op].prec;
        if ((rc = tr_at(t, n->kids[0], 0, p, sb)))
            return rc;
        amk_sb_printf(sb, " %s ", bin[n->op].tok);
        *prec = p;
        const py_node *r = n->kids[1];
        if (n->op == PY_SHR && !(r->kind == PY_NUM && r->num <= 63)) {
            /* Python's a >> 64 is 0 or -1, amk's shift count stops at 63: the same value */
            amk_sb_printf(sb, "min(");
            if ((rc = tr_at(t, r, 0, P_TERN, sb)))
                return rc;
            amk_sb_printf(sb, ", 63)");
            return AMK_OK;
        }
        return tr_at(t, r, 0, p + 1, sb); /* left-associative */
    }
    default:
        return trerr(t, n, "construct");
    }
}

int amk_py_to_amk(const py_node *n, const char *src, int boolean, amk_py_leaf leaf, void *ud,
                  char **out, amk_diag *d)
{
    *out = NULL;
    trctx t = {.src = src, .leaf = leaf, .ud = ud, .d = d};
    amk_sb sb = {0};
    int rc = tr_at(&t, n, boolean, 0, &sb);
    if (!rc && sb.oom)
        rc = amk_diag_set(d, AMK_ENOMEM, "out of memory");
    if (rc) {
        amk_sb_free(&sb);
        return rc;
    }
    *out = amk_sb_take(&sb);
    return *out ? AMK_OK : amk_diag_set(d, AMK_ENOMEM, "out of memory");
}

/* Does the tree hold an operator whose result Python could make a float (/, **)? */
int amk_py_may_float(const py_node *n)
{
    if (n->kind == PY_BIN && (n->op == PY_DIV || n->op == PY_POW))
        return 1;
    for (int i = 0; i < n->nkids; i++)
        if (amk_py_may_float(n->kids[i]))
            return 1;
    return 0;
}

/* Calls cb once per distinct name the tree reads (not comprehension variables). */
void amk_py_names(const py_node *n, void (*cb)(void *ud, const char *name), void *ud)
{
    if (n->kind == PY_NAME)
        cb(ud, n->str);
    for (int i = 0; i < n->nkids; i++)
        amk_py_names(n->kids[i], cb, ud);
}
