/* Check suite for space_defs expressions: parse errors with positions, C precedence,
 * short-circuit evaluation, functions, and every arithmetic error (never UB). */
#include "amk_space_defs.h"
#include "amk_test.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* a=0 b=1 c=2 big=3 (INT64_MIN) neg=4 */
static const char *const names[] = {"a", "b", "c", "big", "neg", NULL};

static int resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], name, len))
            return i;
    return -1;
}

static int64_t slots[5] = {3, 5, 7, INT64_MIN, -7};

/* Parses and evaluates; returns the code of whichever step failed. */
static int ev(const char *src, int64_t *out, amk_diag *d)
{
    amk_expr *e = NULL;
    int rc = amk_expr_parse(src, resolve, NULL, &e, d);
    if (rc)
        return rc;
    rc = amk_expr_eval(e, slots, out, d);
    amk_expr_free(e);
    return rc;
}

static int64_t val(const char *src)
{
    int64_t v = -12345;
    amk_diag d = {0};
    int rc = ev(src, &v, &d);
    ck_assert_msg(rc == AMK_OK, "'%s' failed: %s", src, d.msg);
    return v;
}

static void expect_err(const char *src, int code, const char *needle)
{
    int64_t v = 0;
    amk_diag d = {0};
    int rc = ev(src, &v, &d);
    ck_assert_msg(rc == code, "'%s': expected %s, got %s (%s)", src, amk_err_name(code),
                  amk_err_name(rc), d.msg);
    ck_assert_int_eq(d.code, code);
    ck_assert_msg(strstr(d.msg, needle), "'%s': message '%s' lacks '%s'", src, d.msg, needle);
}

/* ---- amk_expr_parse ---- */

START_TEST(test_amk_expr_parse_error_names_column)
{
    expect_err("min(a, b", AMK_EEXPR, "expected ')' at column 9 in 'min(a, b'");
    expect_err("min(a, ", AMK_EEXPR, "at column 8 in 'min(a, '");
    expect_err("a +", AMK_EEXPR, "expected a value at column 4");
    expect_err("(a", AMK_EEXPR, "expected ')' at column 3");
    expect_err("a)", AMK_EEXPR, "unbalanced ')' at column 2");
    expect_err("a b", AMK_EEXPR, "expected an operator or end of expression at column 3");
    expect_err("a ? b", AMK_EEXPR, "expected ':' at column 6");
    expect_err("a = b", AMK_EEXPR, "column 3");
    expect_err("a # b", AMK_EEXPR, "column 3");
}
END_TEST

START_TEST(test_amk_expr_parse_unknown_names)
{
    expect_err("a + zz", AMK_EEXPR, "unknown name 'zz' at column 5 in 'a + zz'");
    expect_err("foo(a)", AMK_EEXPR, "unknown function 'foo' at column 1");
    expect_err("min(a)", AMK_EEXPR, "min() takes 2 arguments");
    expect_err("log2(a, b)", AMK_EEXPR, "expected ')'");
}
END_TEST

START_TEST(test_amk_expr_parse_literals)
{
    ck_assert_int_eq(val("0x10"), 16);
    ck_assert_int_eq(val("9223372036854775807"), INT64_MAX);
    expect_err("9223372036854775808", AMK_EEXPR, "out of 64-bit range");
    expect_err("12ab", AMK_EEXPR, "malformed number at column 1");
    expect_err("0x", AMK_EEXPR, "malformed hexadecimal");
    expect_err("", AMK_EEXPR, "empty expression");
    expect_err("   ", AMK_EEXPR, "empty expression");
}
END_TEST

START_TEST(test_amk_expr_parse_deep_nesting_refused)
{
    char buf[1200];
    int n = 500;
    for (int i = 0; i < n; i++)
        buf[i] = '(';
    buf[n] = '1';
    for (int i = 0; i < n; i++)
        buf[n + 1 + i] = ')';
    buf[2 * n + 1] = '\0';
    expect_err(buf, AMK_EEXPR, "too deeply nested");
    /* moderate nesting is fine */
    ck_assert_int_eq(val("((((((((((a))))))))))"), 3);
    /* a long flat chain does not grow the stack */
    char chain[4000] = "a";
    for (int i = 0; i < 500; i++)
        strcat(chain, "+1");
    ck_assert_int_eq(val(chain), 503);
}
END_TEST

/* Issue 24: 100 000-operand chains of every operator (left-associative binary, right-
 * associative ?:, prefix unary) parse as a flat chain or are refused as too deeply nested;
 * never a crash. */
START_TEST(test_amk_expr_parse_long_chains_bounded)
{
    static const char *const ops[] = {"+",  "-",  "*",  "/",  "%",  "<<", ">>", "&",  "|",
                                      "&&", "||", "==", "!=", "<",  "<=", ">",  ">=", "?b:",
                                      NULL};
    enum { TERMS = 100000 };
    char *buf = malloc((size_t)TERMS * 8 + 16);
    ck_assert_ptr_nonnull(buf);
    for (int o = 0; ops[o]; o++) {
        size_t k = strlen(ops[o]), at = 0;
        for (int i = 0; i < TERMS; i++) {
            if (i) {
                memcpy(buf + at, ops[o], k);
                at += k;
            }
            buf[at++] = 'b';
        }
        buf[at] = '\0';
        int64_t v = 0;
        amk_diag d = {0};
        int rc = ev(buf, &v, &d);
        ck_assert_msg(rc == AMK_OK || rc == AMK_EDIVZERO || rc == AMK_EOVERFLOW ||
                          (rc == AMK_EEXPR && strstr(d.msg, "too deeply nested")),
                      "'b%sb...': %s %s", ops[o], amk_err_name(rc), d.msg);
    }
    static const char *const prefix[] = {"-", "!", "+", NULL};
    for (int o = 0; prefix[o]; o++) {
        memset(buf, prefix[o][0], TERMS);
        strcpy(buf + TERMS, "b");
        int64_t v = 0;
        amk_diag d = {0};
        int rc = ev(buf, &v, &d);
        ck_assert_msg(rc == AMK_EEXPR && strstr(d.msg, "too deeply nested"), "'%sb...': %s %.80s",
                      prefix[o], amk_err_name(rc), d.msg);
    }
    free(buf);
}
END_TEST

START_TEST(test_amk_expr_parse_null_and_out)
{
    amk_expr *e = (amk_expr *)0x1;
    amk_diag d = {0};
    ck_assert_int_eq(amk_expr_parse("zz", resolve, NULL, &e, &d), AMK_EEXPR);
    ck_assert_ptr_null(e);
    ck_assert_int_eq(amk_expr_parse(NULL, resolve, NULL, &e, NULL), AMK_EINVAL);
}
END_TEST

/* ---- amk_expr_eval ---- */

START_TEST(test_amk_expr_eval_precedence)
{
    ck_assert_int_eq(val("1 + 2 * 3"), 7);
    ck_assert_int_eq(val("(1 + 2) * 3"), 9);
    ck_assert_int_eq(val("10 - 4 - 3"), 3);
    ck_assert_int_eq(val("100 / 10 / 5"), 2);
    ck_assert_int_eq(val("1 << 2 + 1"), 8);
    ck_assert_int_eq(val("1 | 2 & 3 == 3"), 1); /* C: 1 | (2 & (3 == 3)) */
    ck_assert_int_eq(val("6 & 3 | 8"), 10);
    ck_assert_int_eq(val("2 < 3 == 1"), 1);
    ck_assert_int_eq(val("-2 * 3"), -6);
    ck_assert_int_eq(val("- -a"), 3);
    ck_assert_int_eq(val("!0 + 1"), 2);
    ck_assert_int_eq(val("!a"), 0);
    ck_assert_int_eq(val("+a"), 3);
    ck_assert_int_eq(val("a * b % 4"), 3);
    ck_assert_int_eq(val("a < b && b < c || 0"), 1);
    ck_assert_int_eq(val("0 || 1 && 0"), 0);
    ck_assert_int_eq(val("a <= 3"), 1);
    ck_assert_int_eq(val("a >= 4"), 0);
    ck_assert_int_eq(val("a != 3"), 0);
    ck_assert_int_eq(val("a > 2"), 1);
    ck_assert_int_eq(val("256 >> 4"), 16);
}
END_TEST

START_TEST(test_amk_expr_eval_ternary)
{
    ck_assert_int_eq(val("a > 1 ? 10 : 20"), 10);
    ck_assert_int_eq(val("a > 5 ? 10 : 20"), 20);
    ck_assert_int_eq(val("0 ? 1 : 0 ? 2 : 3"), 3); /* right associative */
    ck_assert_int_eq(val("1 ? 0 ? 5 : 6 : 7"), 6);
    ck_assert_int_eq(val("(a ? b : c) * 2"), 10);
    ck_assert_int_eq(val("1 + (0 ? 1 : 2) * 3"), 7);
}
END_TEST

START_TEST(test_amk_expr_eval_short_circuit)
{
    ck_assert_int_eq(val("0 && 1 / 0"), 0);
    ck_assert_int_eq(val("1 || 1 / 0"), 1);
    ck_assert_int_eq(val("1 ? 5 : 1 / 0"), 5);
    ck_assert_int_eq(val("0 ? 1 / 0 : 6"), 6);
    ck_assert_int_eq(val("a && 7"), 1);
    ck_assert_int_eq(val("0 || 7"), 1);
    ck_assert_int_eq(val("0 || 0"), 0);
    expect_err("1 && 1 / 0", AMK_EDIVZERO, "division by zero");
}
END_TEST

START_TEST(test_amk_expr_eval_functions)
{
    ck_assert_int_eq(val("min(a, b)"), 3);
    ck_assert_int_eq(val("max(a, b)"), 5);
    ck_assert_int_eq(val("min(neg, a)"), -7);
    ck_assert_int_eq(val("cdiv(7, 2)"), 4);
    ck_assert_int_eq(val("cdiv(6, 3)"), 2);
    ck_assert_int_eq(val("cdiv(neg, 2)"), -3);
    ck_assert_int_eq(val("cdiv(7, -2)"), -3);
    ck_assert_int_eq(val("cdiv(neg, -2)"), 4);
    ck_assert_int_eq(val("cdiv(0, 5)"), 0);
    ck_assert_int_eq(val("log2(1)"), 0);
    ck_assert_int_eq(val("log2(1023)"), 9);
    ck_assert_int_eq(val("log2(1024)"), 10);
    ck_assert_int_eq(val("log2(9223372036854775807)"), 62);
    ck_assert_int_eq(val("ispow2(0)"), 0);
    ck_assert_int_eq(val("ispow2(64)"), 1);
    ck_assert_int_eq(val("ispow2(96)"), 0);
    ck_assert_int_eq(val("ispow2(-8)"), 0);
    ck_assert_int_eq(val("max(min(a, b), c) + cdiv(a * b, 4)"), 11);
}
END_TEST

START_TEST(test_amk_expr_eval_c_division)
{
    ck_assert_int_eq(val("neg / 2"), -3);
    ck_assert_int_eq(val("neg % 2"), -1);
    ck_assert_int_eq(val("7 % neg"), 0);
    ck_assert_int_eq(val("neg >> 1"), -4); /* arithmetic shift: floor */
    ck_assert_int_eq(val("neg << 2"), -28);
    ck_assert_int_eq(val("-1 << 63"), INT64_MIN);
    ck_assert_int_eq(val("big / 1"), INT64_MIN);
    ck_assert_int_eq(val("big >> 63"), -1);
}
END_TEST

/* Python's // and % on every sign combination: q == floor(a / b), a == b * q + r, and r
 * takes the sign of b (checked against the definition, not against C's / and %). */
START_TEST(test_amk_expr_eval_python_floor_ops)
{
    for (int a = -13; a <= 13; a++)
        for (int b = -5; b <= 5; b++) {
            if (b == 0)
                continue;
            char src[96];
            long long q = -100; /* floor(a / b): the q with a - b * q between 0 and b */
            while (!(b > 0 ? (a - b * q >= 0 && a - b * q < b) : (a - b * q <= 0 && a - b * q > b)))
                q++;
            snprintf(src, sizeof src, "floordiv(%d, %d)", a, b);
            ck_assert_msg(val(src) == q, "%s = %lld, expected %lld", src, (long long)val(src), q);
            snprintf(src, sizeof src, "floormod(%d, %d)", a, b);
            ck_assert_msg(val(src) == a - b * q, "%s = %lld", src, (long long)val(src));
        }
    ck_assert_int_eq(val("floordiv(neg, 2)"), -4);  /* C's neg / 2 is -3 */
    ck_assert_int_eq(val("floormod(neg, 2)"), 1);   /* C's neg % 2 is -1 */
    ck_assert_int_eq(val("floormod(a, -2)"), -1);
    ck_assert_int_eq(val("floormod(big, -1)"), 0);  /* C leaves INT64_MIN % -1 undefined */
    ck_assert_int_eq(val("floordiv(big, 1)"), INT64_MIN);
}
END_TEST

START_TEST(test_amk_expr_eval_python_pow)
{
    ck_assert_int_eq(val("pow(2, 10)"), 1024);
    ck_assert_int_eq(val("pow(0, 0)"), 1);
    ck_assert_int_eq(val("pow(-2, 3)"), -8);
    ck_assert_int_eq(val("pow(neg, 2)"), 49);
    ck_assert_int_eq(val("pow(2, 62)"), 4611686018427387904LL);
    ck_assert_int_eq(val("-pow(2, 2)"), -4); /* Python's -2**2 */
    ck_assert_int_eq(val("pow(-2, 63)"), INT64_MIN);
    ck_assert_int_eq(val("pow(2, b) * 2"), 64);
    expect_err("pow(2, 63)", AMK_EOVERFLOW, "64-bit overflow in pow");
    expect_err("pow(3, 40)", AMK_EOVERFLOW, "overflow in pow at column 1");
    expect_err("pow(a, -1)", AMK_EEXPR, "pow() with a negative exponent");
    expect_err("floordiv(a, 0)", AMK_EDIVZERO, "floordiv by zero");
    expect_err("floordiv(big, -1)", AMK_EOVERFLOW, "overflow in floordiv");
    expect_err("floormod(a, 0)", AMK_EDIVZERO, "floormod by zero");
    expect_err("pow(a)", AMK_EEXPR, "pow() takes 2 arguments");
}
END_TEST

START_TEST(test_amk_expr_eval_errors)
{
    expect_err("a / 0", AMK_EDIVZERO, "division by zero at column 3 in 'a / 0'");
    expect_err("a % (b - 5)", AMK_EDIVZERO, "modulo by zero at column 3");
    expect_err("cdiv(a, 0)", AMK_EDIVZERO, "cdiv by zero");
    expect_err("big / -1", AMK_EOVERFLOW, "INT64_MIN / -1");
    expect_err("big % -1", AMK_EOVERFLOW, "overflow");
    expect_err("cdiv(big, -1)", AMK_EOVERFLOW, "overflow");
    expect_err("-big", AMK_EOVERFLOW, "negation");
    expect_err("9223372036854775807 + 1", AMK_EOVERFLOW, "64-bit overflow");
    expect_err("big - 1", AMK_EOVERFLOW, "64-bit overflow");
    expect_err("4611686018427387904 * 2", AMK_EOVERFLOW, "64-bit overflow at column 21");
    expect_err("1 << 63", AMK_EOVERFLOW, "shift");
    expect_err("3 << 62", AMK_EOVERFLOW, "shift");
    expect_err("1 << 64", AMK_EOVERFLOW, "shift");
    expect_err("1 << -1", AMK_EOVERFLOW, "shift");
    expect_err("1 >> 64", AMK_EOVERFLOW, "shift");
    expect_err("log2(0)", AMK_EEXPR, "log2 of a value <= 0");
    expect_err("log2(neg)", AMK_EEXPR, "log2");
}
END_TEST

START_TEST(test_amk_expr_eval_reuses_compiled_form)
{
    amk_expr *e = NULL;
    amk_diag d = {0};
    ck_assert_int_eq(amk_expr_parse("a * b + (c > 3 ? 100 : 0)", resolve, NULL, &e, &d), AMK_OK);
    int64_t s[5] = {0}, out;
    long long sum = 0;
    for (int i = 0; i < 1000; i++) {
        s[0] = i;
        s[1] = i + 1;
        s[2] = i % 7;
        ck_assert_int_eq(amk_expr_eval(e, s, &out, NULL), AMK_OK);
        ck_assert_int_eq(out, (int64_t)i * (i + 1) + (i % 7 > 3 ? 100 : 0));
        sum += out;
    }
    ck_assert_int_gt(sum, 0);
    amk_expr_free(e);
}
END_TEST

/* ---- amk_expr_slots / amk_expr_source / amk_expr_free ---- */

START_TEST(test_amk_expr_slots_marks_reads)
{
    amk_expr *e = NULL;
    ck_assert_int_eq(amk_expr_parse("a + c * min(c, 1)", resolve, NULL, &e, NULL), AMK_OK);
    unsigned char used[5] = {0};
    amk_expr_slots(e, used, 5);
    ck_assert_int_eq(used[0], 1);
    ck_assert_int_eq(used[1], 0);
    ck_assert_int_eq(used[2], 1);
    ck_assert_int_eq(used[3], 0);
    unsigned char small[1] = {0};
    amk_expr_slots(e, small, 1); /* slots beyond nslots are not written */
    ck_assert_int_eq(small[0], 1);
    amk_expr_free(e);
}
END_TEST

START_TEST(test_amk_expr_source_returns_text)
{
    amk_expr *e = NULL;
    ck_assert_int_eq(amk_expr_parse(" a+b ", resolve, NULL, &e, NULL), AMK_OK);
    ck_assert_str_eq(amk_expr_source(e), " a+b ");
    ck_assert_ptr_null(amk_expr_source(NULL));
    amk_expr_free(e);
}
END_TEST

/* In a child of its own, so that a crash is this case's failure even where Check does not
 * fork (CK_FORK=no); the child then parses, evaluates and frees as usual. */
START_TEST(test_amk_expr_free_accepts_null)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        amk_expr_free(NULL);
        amk_expr *e = NULL;
        amk_diag d = {0};
        int64_t v = 0;
        int ok = amk_expr_parse("b * c", resolve, NULL, &e, &d) == AMK_OK &&
                 amk_expr_eval(e, slots, &v, &d) == AMK_OK && v == 35;
        amk_expr_free(e);
        amk_expr_free(NULL);
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(!WIFSIGNALED(status), "amk_expr_free(NULL) killed the process (signal %d)",
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "after amk_expr_free(NULL), parsing and evaluating b * c failed");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("expr");
    TCase *tc;
    tc = tcase_create("amk_expr_parse");
    tcase_add_test(tc, test_amk_expr_parse_error_names_column);
    tcase_add_test(tc, test_amk_expr_parse_unknown_names);
    tcase_add_test(tc, test_amk_expr_parse_literals);
    tcase_add_test(tc, test_amk_expr_parse_deep_nesting_refused);
    tcase_add_test(tc, test_amk_expr_parse_long_chains_bounded);
    tcase_add_test(tc, test_amk_expr_parse_null_and_out);
    suite_add_tcase(s, tc);
    tc = tcase_create("amk_expr_eval");
    tcase_add_test(tc, test_amk_expr_eval_precedence);
    tcase_add_test(tc, test_amk_expr_eval_ternary);
    tcase_add_test(tc, test_amk_expr_eval_short_circuit);
    tcase_add_test(tc, test_amk_expr_eval_functions);
    tcase_add_test(tc, test_amk_expr_eval_c_division);
    tcase_add_test(tc, test_amk_expr_eval_python_floor_ops);
    tcase_add_test(tc, test_amk_expr_eval_python_pow);
    tcase_add_test(tc, test_amk_expr_eval_errors);
    tcase_add_test(tc, test_amk_expr_eval_reuses_compiled_form);
    suite_add_tcase(s, tc);
    tc = tcase_create("amk_expr_slots");
    tcase_add_test(tc, test_amk_expr_slots_marks_reads);
    suite_add_tcase(s, tc);
    tc = tcase_create("amk_expr_source");
    tcase_add_test(tc, test_amk_expr_source_returns_text);
    suite_add_tcase(s, tc);
    tc = tcase_create("amk_expr_free");
    tcase_add_test(tc, test_amk_expr_free_accepts_null);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}
