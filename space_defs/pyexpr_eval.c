/* Evaluation of a parsed T1 expression with Python's semantics on 64-bit integers (value
 * lists, and the checks of amk import); the parser is pyexpr.c. */
#include "space_defs_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_MAX_ITEMS (1 << 20) /* longest list or range a value list may build */

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
