/* The small subset of Python that Kernel Tuner's T1 space files use (amk import): the parser
 * to a syntax tree and walks of the tree. The evaluator with Python's integer semantics is in
 * pyexpr_eval.c, the translator to amk's integer expressions in pyexpr_to_amk.c. Everything
 * outside the subset is an error naming the construct and its column; no Python is
 * embedded. */
#include "space_defs_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_MAX_NEST 64
/* The tree's height, whatever makes it: brackets, or a flat chain (a + a + ... nests as deep
 * as it is long). Every walk recurses once a level; Python's own compiler gives up near
 * here too. */
#define PY_MAX_HEIGHT 1000

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
    n->height = 1;
    return n;
}

static int add_kid(pyparser *p, py_node *n, py_node *kid)
{
    if (!kid)
        return p->err;
    if (kid->height >= PY_MAX_HEIGHT) {
        amk_py_free(kid);
        return pyerr(p, n->col, "expression too deeply nested (more than %d levels; a chain "
                     "of operators nests as deep as it is long)", PY_MAX_HEIGHT);
    }
    /* Capacity doubles at each power of two: a 100 000-operand 'and' is not quadratic. */
    int nk = n->nkids;
    if ((nk & (nk - 1)) == 0) {
        size_t cap = nk ? 2 * (size_t)nk : 1;
        py_node **k = realloc(n->kids, cap * sizeof *k);
        if (k)
            n->kids = k;
        int *ops = k ? realloc(n->ops, cap * sizeof *ops) : NULL;
        if (ops)
            n->ops = ops;
        if (!k || !ops) {
            amk_py_free(kid);
            return pyerr(p, n->col, "%s", "!out of memory");
        }
    }
    n->ops[n->nkids] = 0;
    n->kids[n->nkids++] = kid;
    if (kid->height + 1 > n->height)
        n->height = kid->height + 1;
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
    int opens = p->pos < p->len && (p->src[p->pos] == '(' || p->src[p->pos] == '[');
    if (opens && ++p->nest > PY_MAX_NEST) { /* f(f(f(...: brackets too */
        amk_py_free(n);
        pyerr(p, p->pos, "%s", "expression too deeply nested");
        return NULL;
    }
    if (p->pos < p->len && p->src[p->pos] == '(') {
        n->kind = PY_CALL;
        p->pos++;
        int rc = parse_items(p, n, ')');
        p->nest--;
        if (rc) {
            amk_py_free(n);
            return NULL;
        }
    } else if (p->pos < p->len && p->src[p->pos] == '[') {
        n->kind = PY_INDEX;
        p->pos++;
        int rc = add_kid(p, n, parse_expr(p));
        p->nest--;
        if (rc) {
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
    if (++p->nest > PY_MAX_NEST) { /* a ** b ** c ... recurses here once an operator */
        amk_py_free(l);
        pyerr(p, at, "%s", "expression too deeply nested");
        return NULL;
    }
    py_node *n = node_new(p, PY_BIN, PY_POW, at);
    if (!n || add_kid(p, n, l) || add_kid(p, n, parse_factor(p))) {
        if (!n)
            amk_py_free(l);
        amk_py_free(n);
        n = NULL;
    }
    p->nest--;
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
