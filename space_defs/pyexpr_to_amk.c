/* Translation of a parsed T1 expression to amk's integer expression language (SPEC.md);
 * the parser is pyexpr.c. */
#include "space_defs_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_MAX_TEXT (64 * 1024) /* longest translation: `and`/`or` as numbers repeat operands */

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
