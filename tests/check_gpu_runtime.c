/* Check suite for the GPU runtime layer's host-side helpers (evaluator/gpu/runtime.c) that
 * need no device: telling "no GPU here" (no device node) from a runtime that fails for
 * another reason. A build without a GPU layer has no runtime.c and skips (exit 77). */
#ifndef AMK_HAVE_GPU
#include <stdio.h>
int main(void)
{
    printf("SKIP: this build has no GPU layer, so no evaluator/gpu/runtime.c to test "
           "(configure with AMK_CUDA=ON or AMK_HIP=ON)\n");
    return 77;
}
#else
#include "amk_test.h"
#include "gpu_int.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void touch(const char *name)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
}

START_TEST(test_amk__gpu_node_present_tells_gpu_nodes_from_others)
{
    amk_test_tmpdir_make(dir, sizeof dir, "gpu-runtime");
    char out[600] = "";
    ck_assert_int_eq(amk__gpu_node_present(dir, "nvidia", out, sizeof out), 0);
    ck_assert_int_eq(amk__gpu_node_present(dir, "amd", out, sizeof out), 0);
    /* The driver's control nodes without a GPU node: still no GPU. */
    touch("nvidiactl");
    touch("nvidia-uvm");
    touch("nvidia-caps");
    ck_assert_int_eq(amk__gpu_node_present(dir, "nvidia", out, sizeof out), 0);
    touch("nvidia3");
    ck_assert_int_eq(amk__gpu_node_present(dir, "nvidia", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "/nvidia3"), "%s", out);
    ck_assert_int_eq(amk__gpu_node_present(dir, "amd", out, sizeof out), 0);
    touch("kfd");
    ck_assert_int_eq(amk__gpu_node_present(dir, "amd", out, sizeof out), 1);
    ck_assert_int_eq(amk__gpu_node_present("/nonexistent-amk-dir", "nvidia", out, sizeof out), 0);
    amk_test_tmpdir_remove(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gpu_runtime");
    TCase *tc = tcase_create("amk__gpu_node_present");
    tcase_add_test(tc, test_amk__gpu_node_present_tells_gpu_nodes_from_others);
    suite_add_tcase(s, tc);
    return amk_test_run(s);
}
#endif
