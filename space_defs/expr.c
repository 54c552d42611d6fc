/* Integer expressions of kernel specs: a recursive-descent parser that emits postfix
 * bytecode over a slot array (names resolved once, at parse time), and a small stack
 * machine that evaluates it with checked 64-bit arithmetic. */
#include "space_defs_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST 64 /* parenthesis / unary / ternary nesting accepted by the parser */

typedef struct parser {
    const char *src;
    size_t len, pos;
    amk_name_resolver resolve;
    void *ud;
    amk__insn *code;
    int n, cap;
    int depth, maxdepth; /* evaluation stack depth while emitting */
    int nest;
    int err;
    amk_diag *d;
} parser;

static int perr(parser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(parser *p, size_t at, const char *fmt, ...)
{
    if (p->err)
        return p->err;
    char m[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    p->err = AMK_EEXPR;
    amk_diag_set(p->d, AMK_EEXPR, "%s at column %zu in '%s'", m, at + 1, p->src);
    return p->err;
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len && isspace((unsigned char)p->src[p->pos]))
        p->pos++;
}

/* Emits one instruction; delta is its effect on the stack depth on the fall-through path. */
static int emit(parser *p, int op, int64_t v, size_t col, int delta)
{
    if (p->err)
        return -1;
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        amk__insn *c = realloc(p->code, (size_t)cap * sizeof *c);
        if (!c) {
            p->err = AMK_ENOMEM;
            amk_diag_set(p->d, AMK_ENOMEM, "out of memory parsing '%s'", p->src);
            return -1;
        }
        p->code = c;
        p->cap = cap;
    }
    p->code[p->n] = (amk__insn){.op = op, .col = (int32_t)(col + 1), .v = v};
    p->depth += delta;
    if (p->depth > p->maxdepth)
        p->maxdepth = p->depth;
    if (p->maxdepth > AMK__EXPR_STACK) {
        perr(p, col, "%s", "expression too deeply nested");
        return -1;
    }
    return p->n++;
}

/* Does the text at pos start with the operator op (and not a longer one)? */
static int peek_op(parser *p, const char *op)
{
    skip_ws(p);
    size_t k = strlen(op);
    if (p->pos + k > p->len || memcmp(p->src + p->pos, op, k) != 0)
        return 0;
    char next = p->pos + k < p->len ? p->src[p->pos + k] : '\0';
    /* keep "<" from matching "<<" or "<=", "&" from "&&", "!" from "!=", "=" alone... */
    if (k == 1) {
        char c = op[0];
        if ((c == '<' || c == '>') && (next == c || next == '='))
            return 0;
        if ((c == '&' || c == '|') && next == c)
            return 0;
        if (c == '!' && next == '=')
            return 0;
    }
    if (k == 2 && (op[0] == '<' || op[0] == '>') && op[1] == op[0] && next == '=')
        return 0;
    return 1;
}

static int parse_ternary(parser *p);

static int op_arity(int op)
{
    switch (op) {
    case AMK__OP_NEG: case AMK__OP_NOT: case AMK__OP_BOOL: case AMK__OP_LOG2:
    case AMK__OP_ISPOW2:
        return 1;
    case AMK__OP_CONST: case AMK__OP_LOAD:
        return 0;
    default:
        return 2;
    }
}

/* Emits an operator whose operands start at code[start] (the right operand of a binary
 * operator at code[rstart], or -1), then shrinks the code:
 * - operands that are all literals are folded into one literal (unless evaluating them
 *   fails: the error must then surface at evaluation, with its message);
 * - a right operand that is a single literal or name is fused into the operator, saving
 *   one dispatch. A jump can only target the start of an operand, which keeps its index. */
static void emit_op(parser *p, int op, size_t col, int delta, int start, int rstart)
{
    if (emit(p, op, 0, col, delta) < 0)
        return;
    int arity = op_arity(op);
    int all_const = p->n - 1 - start == arity;
    for (int i = start; all_const && i < p->n - 1; i++)
        all_const = p->code[i].op == AMK__OP_CONST;
    if (all_const) {
        amk_expr *t = malloc(sizeof *t + (size_t)(arity + 1) * sizeof(amk__insn));
        if (t) {
            t->n = arity + 1;
            t->maxdepth = arity;
            t->src = NULL;
            memcpy(t->code, p->code + start, (size_t)(arity + 1) * sizeof(amk__insn));
            int64_t r;
            if (amk__expr_run(t, NULL, &r, NULL) == AMK_OK) {
                p->code[start].op = AMK__OP_CONST;
                p->code[start].v = r;
                p->n = start + 1;
                free(t);
                return;
            }
            free(t);
        }
    }
    if (rstart >= 0 && p->n - 1 - rstart == 1 &&
        (p->code[rstart].op == AMK__OP_CONST || p->code[rstart].op == AMK__OP_LOAD)) {
        int flag = p->code[rstart].op == AMK__OP_LOAD ? AMK__FUSE_SLOT : AMK__FUSE_CONST;
        p->code[rstart].op = op | flag;
        p->code[rstart].col = p->code[p->n - 1].col;
        p->n--;
    }
}

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_'; }

static const struct {
    const char *name;
    int op, arity;
} funcs[] = {
    {"min", AMK__OP_MIN, 2},   {"max", AMK__OP_MAX, 2},       {"cdiv", AMK__OP_CDIV, 2},
    {"log2", AMK__OP_LOG2, 1}, {"ispow2", AMK__OP_ISPOW2, 1},
    /* Python's integer ** // %, for spaces imported from Kernel Tuner (amk import): named
     * functions rather than operators, so that / and % keep C's meaning and one spelling. */
    {"pow", AMK__OP_POW, 2},   {"floordiv", AMK__OP_FLOORDIV, 2},
    {"floormod", AMK__OP_FLOORMOD, 2},
};

static int parse_number(parser *p)
{
    size_t start = p->pos;
    const char *s = p->src;
    uint64_t v = 0;
    int base = 10;
    if (s[p->pos] == '0' && p->pos + 1 < p->len && (s[p->pos + 1] == 'x' || s[p->pos + 1] == 'X')) {
        base = 16;
        p->pos += 2;
        if (p->pos >= p->len || !isxdigit((unsigned char)s[p->pos]))
            return perr(p, start, "%s", "malformed hexadecimal literal");
    }
    while (p->pos < p->len && (base == 16 ? isxdigit((unsigned char)s[p->pos])
                                          : isdigit((unsigned char)s[p->pos]))) {
        int c = (unsigned char)s[p->pos];
        unsigned dig = isdigit(c) ? (unsigned)(c - '0') : (unsigned)(tolower(c) - 'a' + 10);
        if (v > ((uint64_t)INT64_MAX - dig) / (uint64_t)base)
            return perr(p, start, "%s", "integer literal out of 64-bit range");
        v = v * (uint64_t)base + dig;
        p->pos++;
    }
    if (p->pos < p->len && is_ident_char((unsigned char)s[p->pos]))
        return perr(p, start, "%s", "malformed number");
    emit(p, AMK__OP_CONST, (int64_t)v, start, +1);
    return p->err;
}

static int parse_primary(parser *p)
{
    skip_ws(p);
    if (p->pos >= p->len)
        return perr(p, p->pos, "%s", "expected a value");
    int c = (unsigned char)p->src[p->pos];
    size_t start = p->pos;
    if (c == '(') {
        p->pos++;
        if (++p->nest > MAX_NEST)
            return perr(p, start, "%s", "expression too deeply nested");
        if (parse_ternary(p))
            return p->err;
        p->nest--;
        skip_ws(p);
        if (p->pos >= p->len || p->src[p->pos] != ')')
            return perr(p, p->pos, "%s", "expected ')'");
        p->pos++;
        return 0;
    }
    if (isdigit(c))
        return parse_number(p);
    if (!is_ident_start(c)) {
        char what[8];
        snprintf(what, sizeof what, "%c", isprint(c) ? c : '?');
        return perr(p, start, "unexpected '%s'", what);
    }
    while (p->pos < p->len && is_ident_char((unsigned char)p->src[p->pos]))
        p->pos++;
    size_t nlen = p->pos - start;
    char name[AMK_NAME_MAX];
    snprintf(name, sizeof name, "%.*s", (int)(nlen < sizeof name ? nlen : sizeof name - 1),
             p->src + start);
    skip_ws(p);
    if (p->pos < p->len && p->src[p->pos] == '(') {
        int f = -1;
        for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
            if (strlen(funcs[i].name) == nlen && !memcmp(funcs[i].name, p->src + start, nlen))
                f = (int)i;
        if (f < 0)
            return perr(p, start, "unknown function '%s'", name);
        p->pos++;
        if (++p->nest > MAX_NEST)
            return perr(p, start, "%s", "expression too deeply nested");
        int first = p->n, second = -1;
        for (int a = 0; a < funcs[f].arity; a++) {
            if (a > 0) {
                skip_ws(p);
                if (p->pos >= p->len || p->src[p->pos] != ',') {
                    char m[64];
                    snprintf(m, sizeof m, "%s() takes %d arguments: expected ','",
                             funcs[f].name, funcs[f].arity);
                    return perr(p, p->pos, "%s", m);
                }
                p->pos++;
                second = p->n;
            }
            if (parse_ternary(p))
                return p->err;
        }
        p->nest--;
        skip_ws(p);
        if (p->pos >= p->len || p->src[p->pos] != ')')
            return perr(p, p->pos, "%s", "expected ')'");
        p->pos++;
        emit_op(p, funcs[f].op, start, funcs[f].arity == 2 ? -1 : 0, first, second);
        return p->err;
    }
    int slot = p->resolve ? p->resolve(p->ud, p->src + start, nlen) : -1;
    if (slot < 0)
        return perr(p, start, "unknown name '%s'", name);
    emit(p, AMK__OP_LOAD, slot, start, +1);
    return p->err;
}

static int parse_unary(parser *p)
{
    skip_ws(p);
    size_t at = p->pos;
    int op = -1;
    if (peek_op(p, "-"))
        op = AMK__OP_NEG;
    else if (peek_op(p, "!"))
        op = AMK__OP_NOT;
    else if (peek_op(p, "+"))
        op = -2;
    if (op == -1)
        return parse_primary(p);
    p->pos++;
    if (++p->nest > MAX_NEST)
        return perr(p, at, "%s", "expression too deeply nested");
    int start = p->n;
    if (parse_unary(p))
        return p->err;
    p->nest--;
    if (op >= 0)
        emit_op(p, op, at, 0, start, -1);
    return p->err;
}

/* Binary levels, loosest first (C precedence). */
typedef struct binop {
    const char *tok;
    int op;
} binop;
static const binop lv_bor[] = {{"|", AMK__OP_BOR}, {NULL, 0}};
static const binop lv_band[] = {{"&", AMK__OP_BAND}, {NULL, 0}};
static const binop lv_eq[] = {{"==", AMK__OP_EQ}, {"!=", AMK__OP_NE}, {NULL, 0}};
static const binop lv_rel[] = {{"<=", AMK__OP_LE}, {">=", AMK__OP_GE}, {"<", AMK__OP_LT},
                               {">", AMK__OP_GT},  {NULL, 0}};
static const binop lv_shift[] = {{"<<", AMK__OP_SHL}, {">>", AMK__OP_SHR}, {NULL, 0}};
static const binop lv_add[] = {{"+", AMK__OP_ADD}, {"-", AMK__OP_SUB}, {NULL, 0}};
static const binop lv_mul[] = {{"*", AMK__OP_MUL}, {"/", AMK__OP_DIV}, {"%", AMK__OP_MOD},
                               {NULL, 0}};
static const binop *const levels[] = {lv_bor, lv_band, lv_eq, lv_rel, lv_shift, lv_add, lv_mul};
#define NLEVELS ((int)(sizeof levels / sizeof levels[0]))

static int parse_binary(parser *p, int level)
{
    if (level == NLEVELS)
        return parse_unary(p);
    int lstart = p->n;
    if (parse_binary(p, level + 1))
        return p->err;
    for (;;) {
        const binop *hit = NULL;
        for (const binop *b = levels[level]; b->tok; b++)
            if (peek_op(p, b->tok)) {
                hit = b;
                break;
            }
        if (!hit)
            return 0;
        size_t at = p->pos;
        p->pos += strlen(hit->tok);
        int rstart = p->n;
        if (parse_binary(p, level + 1))
            return p->err;
        emit_op(p, hit->op, at, -1, lstart, rstart);
        if (p->err)
            return p->err;
    }
}

static void patch(parser *p, int at)
{
    if (!p->err && at >= 0)
        p->code[at].v = p->n;
}

static int parse_and(parser *p)
{
    if (parse_binary(p, 0))
        return p->err;
    while (peek_op(p, "&&")) {
        size_t at = p->pos;
        p->pos += 2;
        int j = emit(p, AMK__OP_JZ_KEEP, 0, at, -1);
        if (parse_binary(p, 0))
            return p->err;
        emit(p, AMK__OP_BOOL, 0, at, 0);
        patch(p, j);
    }
    return p->err;
}

static int parse_or(parser *p)
{
    if (parse_and(p))
        return p->err;
    while (peek_op(p, "||")) {
        size_t at = p->pos;
        p->pos += 2;
        int j = emit(p, AMK__OP_JNZ_ONE, 0, at, -1);
        if (parse_and(p))
            return p->err;
        emit(p, AMK__OP_BOOL, 0, at, 0);
        patch(p, j);
    }
    return p->err;
}

static int parse_ternary(parser *p)
{
    if (parse_or(p))
        return p->err;
    if (!peek_op(p, "?"))
        return 0;
    size_t at = p->pos;
    p->pos++;
    if (++p->nest > MAX_NEST)
        return perr(p, at, "%s", "expression too deeply nested");
    int jz = emit(p, AMK__OP_JZ_POP, 0, at, -1);
    int base = p->depth;
    if (parse_ternary(p))
        return p->err;
    skip_ws(p);
    if (p->pos >= p->len || p->src[p->pos] != ':')
        return perr(p, p->pos, "%s", "expected ':'");
    p->pos++;
    int jmp = emit(p, AMK__OP_JMP, 0, at, 0);
    patch(p, jz);
    p->depth = base;
    if (parse_ternary(p))
        return p->err;
    patch(p, jmp);
    p->nest--;
    return p->err;
}

int amk_expr_parse(const char *src, amk_name_resolver resolve, void *ud, amk_expr **out,
                   amk_diag *d)
{
    *out = NULL;
    if (!src)
        return amk_diag_set(d, AMK_EINVAL, "expression is NULL");
    parser p = {.src = src, .len = strlen(src), .resolve = resolve, .ud = ud, .d = d};
    skip_ws(&p);
    if (p.pos >= p.len)
        return amk_diag_set(d, AMK_EEXPR, "empty expression '%s'", src);
    parse_ternary(&p);
    if (!p.err) {
        skip_ws(&p);
        if (p.pos < p.len) {
            if (p.src[p.pos] == ')')
                perr(&p, p.pos, "%s", "unbalanced ')'");
            else
                perr(&p, p.pos, "%s", "expected an operator or end of expression");
        }
    }
    if (p.err) {
        free(p.code);
        return p.err;
    }
    amk_expr *e = malloc(sizeof *e + (size_t)p.n * sizeof(amk__insn));
    char *s = strdup(src);
    if (!e || !s) {
        free(e);
        free(s);
        free(p.code);
        return amk_diag_set(d, AMK_ENOMEM, "out of memory parsing '%s'", src);
    }
    e->src = s;
    e->n = p.n;
    e->maxdepth = p.maxdepth;
    memcpy(e->code, p.code, (size_t)p.n * sizeof(amk__insn));
    free(p.code);
    *out = e;
    return AMK_OK;
}

/* Truncating division rounded up (toward +inf): exact ceiling for every sign combination. */
static int cdiv64(int64_t a, int64_t b, int64_t *r)
{
    if (b == 0)
        return AMK_EDIVZERO;
    if (a == INT64_MIN && b == -1)
        return AMK_EOVERFLOW;
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) == (b < 0)))
        q++;
    *r = q;
    return AMK_OK;
}

/* Python's a ** b for b >= 0 (0 ** 0 is 1); a negative exponent (a float in Python) is
 * AMK_EEXPR, a result outside 64 bits AMK_EOVERFLOW. */
static int pow64(int64_t a, int64_t b, int64_t *r)
{
    if (b < 0)
        return AMK_EEXPR;
    int64_t acc = 1, base = a;
    while (b > 0) {
        if ((b & 1) && __builtin_mul_overflow(acc, base, &acc))
            return AMK_EOVERFLOW;
        b >>= 1;
        if (b > 0 && __builtin_mul_overflow(base, base, &base))
            return AMK_EOVERFLOW;
    }
    *r = acc;
    return AMK_OK;
}

/* Python's a // b (rounds toward -inf) and a % b (takes the sign of b): a == b * q + r. */
static int floordiv64(int64_t a, int64_t b, int64_t *q)
{
    if (b == 0)
        return AMK_EDIVZERO;
    if (a == INT64_MIN && b == -1)
        return AMK_EOVERFLOW;
    int64_t t = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        t--;
    *q = t;
    return AMK_OK;
}

static int floormod64(int64_t a, int64_t b, int64_t *r)
{
    if (b == 0)
        return AMK_EDIVZERO;
    if (b == -1) { /* INT64_MIN % -1 is undefined in C; Python gives 0 */
        *r = 0;
        return AMK_OK;
    }
    int64_t t = a % b;
    if (t != 0 && ((t < 0) != (b < 0)))
        t += b;
    *r = t;
    return AMK_OK;
}

int amk__expr_run(const amk_expr *e, const int64_t *slots, int64_t *out, int *errpc)
{
    int64_t st[AMK__EXPR_STACK];
    int sp = 0;
    const amk__insn *code = e->code;
    const int n = e->n;
    int pc = 0;
    int rc = AMK_OK;
    while (pc < n) {
        const amk__insn *I = &code[pc];
        int64_t a, b;
        int op = I->op;
        if (op & (AMK__FUSE_SLOT | AMK__FUSE_CONST)) {
            /* fused right operand: push it, then run the plain operator */
            st[sp++] = op & AMK__FUSE_SLOT ? slots[I->v] : I->v;
            op &= AMK__OP_MASK;
        }
        switch (op) {
        case AMK__OP_CONST: st[sp++] = I->v; break;
        case AMK__OP_LOAD: st[sp++] = slots[I->v]; break;
        case AMK__OP_NEG:
            if (st[sp - 1] == INT64_MIN) { rc = AMK_EOVERFLOW; goto fail; }
            st[sp - 1] = -st[sp - 1];
            break;
        case AMK__OP_NOT: st[sp - 1] = !st[sp - 1]; break;
        case AMK__OP_BOOL: st[sp - 1] = st[sp - 1] != 0; break;
#define BIN b = st[--sp]; a = st[sp - 1];
        case AMK__OP_ADD:
            BIN if (__builtin_add_overflow(a, b, &st[sp - 1])) { rc = AMK_EOVERFLOW; goto fail; }
            break;
        case AMK__OP_SUB:
            BIN if (__builtin_sub_overflow(a, b, &st[sp - 1])) { rc = AMK_EOVERFLOW; goto fail; }
            break;
        case AMK__OP_MUL:
            BIN if (__builtin_mul_overflow(a, b, &st[sp - 1])) { rc = AMK_EOVERFLOW; goto fail; }
            break;
        case AMK__OP_DIV:
            BIN if (b == 0) { rc = AMK_EDIVZERO; goto fail; }
            if (a == INT64_MIN && b == -1) { rc = AMK_EOVERFLOW; goto fail; }
            st[sp - 1] = a / b;
            break;
        case AMK__OP_MOD:
            BIN if (b == 0) { rc = AMK_EDIVZERO; goto fail; }
            if (a == INT64_MIN && b == -1) { rc = AMK_EOVERFLOW; goto fail; }
            st[sp - 1] = a % b;
            break;
        case AMK__OP_SHL:
            BIN if (b < 0 || b > 63) { rc = AMK_EOVERFLOW; goto fail; }
            /* a << b as a * 2^b, so a bit shifted out (or into the sign) is an overflow */
            if (b == 63) {
                if (a != 0 && a != -1) { rc = AMK_EOVERFLOW; goto fail; }
                st[sp - 1] = a == 0 ? 0 : INT64_MIN;
            } else if (__builtin_mul_overflow(a, (int64_t)1 << b, &st[sp - 1])) {
                rc = AMK_EOVERFLOW;
                goto fail;
            }
            break;
        case AMK__OP_SHR:
            BIN if (b < 0 || b > 63) { rc = AMK_EOVERFLOW; goto fail; }
            /* arithmetic shift (floor division by 2^b), spelled without relying on >> of
             * a negative value */
            st[sp - 1] = a >= 0 ? a >> b : ~(~a >> b);
            break;
        case AMK__OP_BAND: BIN st[sp - 1] = a & b; break;
        case AMK__OP_BOR: BIN st[sp - 1] = a | b; break;
        case AMK__OP_EQ: BIN st[sp - 1] = a == b; break;
        case AMK__OP_NE: BIN st[sp - 1] = a != b; break;
        case AMK__OP_LT: BIN st[sp - 1] = a < b; break;
        case AMK__OP_LE: BIN st[sp - 1] = a <= b; break;
        case AMK__OP_GT: BIN st[sp - 1] = a > b; break;
        case AMK__OP_GE: BIN st[sp - 1] = a >= b; break;
        case AMK__OP_MIN: BIN st[sp - 1] = a < b ? a : b; break;
        case AMK__OP_MAX: BIN st[sp - 1] = a > b ? a : b; break;
        case AMK__OP_CDIV:
            BIN rc = cdiv64(a, b, &st[sp - 1]);
            if (rc) goto fail;
            break;
        case AMK__OP_POW:
            BIN rc = pow64(a, b, &st[sp - 1]);
            if (rc) goto fail;
            break;
        case AMK__OP_FLOORDIV:
            BIN rc = floordiv64(a, b, &st[sp - 1]);
            if (rc) goto fail;
            break;
        case AMK__OP_FLOORMOD:
            BIN rc = floormod64(a, b, &st[sp - 1]);
            if (rc) goto fail;
            break;
#undef BIN
        case AMK__OP_LOG2:
            a = st[sp - 1];
            if (a <= 0) { rc = AMK_EEXPR; goto fail; }
            st[sp - 1] = 63 - __builtin_clzll((unsigned long long)a);
            break;
        case AMK__OP_ISPOW2:
            a = st[sp - 1];
            st[sp - 1] = a > 0 && (a & (a - 1)) == 0;
            break;
        case AMK__OP_JZ_KEEP:
            if (st[sp - 1] == 0) { pc = (int)I->v; continue; }
            sp--;
            break;
        case AMK__OP_JNZ_ONE:
            if (st[sp - 1] != 0) { st[sp - 1] = 1; pc = (int)I->v; continue; }
            sp--;
            break;
        case AMK__OP_JZ_POP:
            if (st[--sp] == 0) { pc = (int)I->v; continue; }
            break;
        case AMK__OP_JMP: pc = (int)I->v; continue;
        default: rc = AMK_EEXPR; goto fail;
        }
        pc++;
    }
    *out = st[0];
    return AMK_OK;
fail:
    if (errpc)
        *errpc = pc;
    return rc;
}

/* Names the failing operation, its column and the expression text. */
int amk__expr_error(const amk_expr *e, const int64_t *slots, int code, int errpc, amk_diag *d)
{
    (void)slots;
    const amk__insn *I = &e->code[errpc];
    const int op = I->op & AMK__OP_MASK;
    const char *what;
    switch (op) {
    case AMK__OP_DIV: what = "division by zero"; break;
    case AMK__OP_MOD: what = "modulo by zero"; break;
    case AMK__OP_CDIV: what = code == AMK_EDIVZERO ? "cdiv by zero" : "64-bit overflow in cdiv"; break;
    case AMK__OP_SHL:
    case AMK__OP_SHR: what = "shift count outside 0..63 or bits shifted out"; break;
    case AMK__OP_LOG2: what = "log2 of a value <= 0"; break;
    case AMK__OP_NEG: what = "64-bit overflow in negation"; break;
    case AMK__OP_POW:
        what = code == AMK_EEXPR ? "pow() with a negative exponent" : "64-bit overflow in pow";
        break;
    case AMK__OP_FLOORDIV:
        what = code == AMK_EDIVZERO ? "floordiv by zero" : "64-bit overflow in floordiv";
        break;
    case AMK__OP_FLOORMOD: what = "floormod by zero"; break;
    default: what = "64-bit overflow"; break;
    }
    if (code == AMK_EOVERFLOW && (op == AMK__OP_DIV || op == AMK__OP_MOD))
        what = "64-bit overflow (INT64_MIN / -1)";
    return amk_diag_set(d, code, "%s at column %d in '%s'", what, I->col, e->src);
}

int amk_expr_eval(const amk_expr *e, const int64_t *slots, int64_t *out, amk_diag *d)
{
    if (!e || !out)
        return amk_diag_set(d, AMK_EINVAL, "amk_expr_eval: NULL argument");
    int pc = 0;
    int rc = amk__expr_run(e, slots, out, &pc);
    if (rc)
        return amk__expr_error(e, slots, rc, pc, d);
    return AMK_OK;
}

void amk_expr_slots(const amk_expr *e, unsigned char *used, int nslots)
{
    if (!e)
        return;
    for (int i = 0; i < e->n; i++)
        if ((e->code[i].op == AMK__OP_LOAD || (e->code[i].op & AMK__FUSE_SLOT)) &&
            e->code[i].v >= 0 && e->code[i].v < nslots)
            used[e->code[i].v] = 1;
}

const char *amk_expr_source(const amk_expr *e)
{
    return e ? e->src : NULL;
}

void amk_expr_free(amk_expr *e)
{
    if (e) {
        free(e->src);
        free(e);
    }
}
