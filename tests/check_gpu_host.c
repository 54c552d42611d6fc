/* Check suite for the pure host functions of the GPU layer: the run worker's reference-cache
 * key and the run-job codec (gpu_wire.c), the tensor-map encoder's refusals (gpu/), the
 * gpu backend's parallelism and its refusal of bad device lists (gpu_backend.c). No GPU needed (none of these makes a GPU call);
 * a build without a GPU layer lacks them and skips (exit 77). The check's and the
 * benchmark's host numerics are tested in check_numeric.c. */
#ifndef AMK_HAVE_GPU
#include <stdio.h>
int main(void)
{
    printf("SKIP: this build has no GPU layer, so no run-job wire format or gpu backend to "
           "test (configure with AMK_CUDA=ON or AMK_HIP=ON)\n");
    return 77;
}
#else
#include "amk_evaluator.h" /* amk_evaluator_create */
#include "amk_test.h"
#include "backends/gpu_backend_int.h" /* amk__gpu_parallelism_for */
#include "gpu_int.h"         /* amk__gpu_tensor_map_encode; the wire format */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- amk__ref_key_make (gpu_wire.c) ------------------------------------------------- */

/* A job as the gpu backend builds it: code 0 the candidate, code 1 the reference; case 0 a
 * GEMM-like case (A, B in; C out; W inout workspace), case 1 a smaller one. */
static void make_job(amk__run_job *j)
{
    static const unsigned char cand_img[] = "candidate code", ref_img[] = "reference code";
    memset(j, 0, sizeof *j);
    j->op = AMK__RUN_OP_EVAL;
    j->seed = UINT64_C(0x1234567890abcdef);
    j->ncodes = 2;
    j->codes[0] = (amk__run_code){cand_img, sizeof cand_img, amk_hash64(cand_img, sizeof cand_img)};
    j->codes[1] = (amk__run_code){ref_img, sizeof ref_img, amk_hash64(ref_img, sizeof ref_img)};
    j->ncases = 2;
    for (int c = 0; c < 2; c++) {
        amk__run_case *rc = &j->cases[c];
        int64_t n = c == 0 ? 4096 : 77;
        snprintf(rc->label, sizeof rc->label, "M=%lld", (long long)n);
        rc->nbufs = 4;
        const char *names[4] = {"A", "B", "C", "W"};
        const int roles[4] = {AMK__ROLE_IN, AMK__ROLE_IN, AMK__ROLE_OUT, AMK__ROLE_INOUT};
        for (int b = 0; b < 4; b++) {
            snprintf(rc->bufs[b].name, sizeof rc->bufs[b].name, "%s", names[b]);
            rc->bufs[b].dtype = b == 2 ? AMK__DT_F32 : AMK__DT_F16;
            rc->bufs[b].role = roles[b];
            rc->bufs[b].init = b == 3 ? AMK__INIT_ZERO : AMK__INIT_UNIFORM;
            rc->bufs[b].count = n * n;
            rc->bufs[b].reduction = (double)n;
        }
        rc->rtol_scale = 1.0;
        rc->atol = NAN;
        rc->bench = c == 0;
        amk__run_kernel *k[2] = {&rc->cand, &rc->ref};
        for (int w = 0; w < 2; w++) {
            k[w]->code = w == 0 ? 0 : 1;
            snprintf(k[w]->entry, sizeof k[w]->entry, "%s", w == 0 ? "gemm" : "gemm_ref");
            for (int i = 0; i < 3; i++) {
                k[w]->launch.grid[i] = i == 0 ? n / 16 : 1;
                k[w]->launch.block[i] = i == 0 ? 256 : 1;
            }
            k[w]->launch.shared_bytes = w == 0 ? 65536 : 0;
            k[w]->nargs = 5;
            for (int a = 0; a < 4; a++)
                k[w]->args[a] = (amk__run_arg){.buf = a};
            k[w]->args[4] = (amk__run_arg){.buf = -1, .value = (int32_t)n};
        }
    }
}

static int same_key(const amk__run_job *a, const amk__run_job *b, int ci)
{
    amk__ref_key ka, kb;
    uint64_t ha = amk__ref_key_make(a, ci, &ka), hb = amk__ref_key_make(b, ci, &kb);
    int eq = memcmp(&ka, &kb, sizeof ka) == 0;
    ck_assert_msg(eq == (ha == hb), "hash and bytes disagree (hash %s, bytes %s)",
                  ha == hb ? "equal" : "differ", eq ? "equal" : "differ");
    return eq;
}

START_TEST(test_ref_key_ignores_the_candidate)
{
    static const unsigned char other_img[] = "another candidate, longer than the first";
    amk__run_job *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    ck_assert(a && b);
    make_job(a);
    make_job(b);
    ck_assert(same_key(a, b, 0) && same_key(a, b, 1));
    /* Everything of the candidate, the label, the tolerance, the bench settings. */
    b->codes[0] = (amk__run_code){other_img, sizeof other_img,
                                  amk_hash64(other_img, sizeof other_img)};
    for (int c = 0; c < 2; c++) {
        amk__run_case *rc = &b->cases[c];
        snprintf(rc->cand.entry, sizeof rc->cand.entry, "gemm_v2");
        rc->cand.launch.grid[0] = 3;
        rc->cand.launch.block[0] = 128;
        rc->cand.launch.shared_bytes = 1000;
        rc->cand.args[4].value = 9;
        rc->cand.nargs = 4;
        snprintf(rc->label, sizeof rc->label, "another label");
        rc->rtol_scale = 4.0;
        rc->atol = 0.5;
        rc->bench = !rc->bench;
        for (int k = 0; k < rc->nbufs; k++)
            rc->bufs[k].reduction = 1.0;
    }
    b->op = AMK__RUN_OP_EVAL;
    b->device = 3;
    b->check_threads = 5;
    b->bench.cold = !a->bench.cold;
    ck_assert(same_key(a, b, 0) && same_key(a, b, 1));
    /* The reference named by content, not by its index in the job. */
    b->codes[2] = a->codes[1];
    b->codes[1] = (amk__run_code){other_img, sizeof other_img, 1};
    b->ncodes = 3;
    b->cases[0].ref.code = 2;
    ck_assert(same_key(a, b, 0));
    /* Bytes after a name's terminator, and the value slot of a buffer argument. */
    make_job(b);
    memset(b->cases[0].bufs[1].name + 2, 'x', 10);
    memset(b->cases[0].ref.entry + 9, 'y', 10);
    b->cases[0].ref.args[0].value = 77;
    ck_assert(same_key(a, b, 0));
    free(a);
    free(b);
}
END_TEST

START_TEST(test_ref_key_changes_with_what_makes_the_reference)
{
    amk__run_job *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    ck_assert(a && b);
    make_job(a);
    /* Each change must give another key (case 0). */
    for (int change = 0; change < 18; change++) {
        make_job(b);
        amk__run_case *rc = &b->cases[0];
        switch (change) {
        case 0: b->seed ^= 1; break;
        case 1: b->codes[1].hash ^= 1; break;
        case 2: b->codes[1].size--; break;
        case 3: snprintf(rc->ref.entry, sizeof rc->ref.entry, "gemm_ref2"); break;
        case 4: rc->ref.launch.grid[1] = 2; break;
        case 5: rc->ref.launch.block[2] = 2; break;
        case 6: rc->ref.launch.shared_bytes = 16; break;
        case 7: rc->ref.nargs = 4; break;
        case 8: rc->ref.args[4].value++; break;
        case 9: rc->ref.args[1].buf = 0; break;
        case 10: rc->nbufs = 3; break;
        case 11: snprintf(rc->bufs[0].name, sizeof rc->bufs[0].name, "A2"); break;
        case 12: rc->bufs[0].dtype = AMK__DT_BF16; break;
        case 13: rc->bufs[3].role = AMK__ROLE_OUT; break;
        case 14: rc->bufs[1].init = AMK__INIT_NORMAL; break;
        case 15: rc->bufs[2].count--; break;
        case 16: b->cases[0] = a->cases[1]; break; /* another case at index 0 */
        case 17: rc->ref.code = 0; break;          /* the candidate's code as reference */
        }
        ck_assert_msg(!same_key(a, b, 0), "change %d kept the key", change);
    }
    /* The same case at another index has another stream (other inputs). */
    make_job(b);
    b->cases[1] = a->cases[0];
    amk__ref_key k0, k1;
    ck_assert(amk__ref_key_make(a, 0, &k0) != amk__ref_key_make(b, 1, &k1));
    ck_assert_uint_eq(k0.stream, 0);
    ck_assert_uint_eq(k1.stream, AMK__RUN_MAX_BUFS);
    free(a);
    free(b);
}
END_TEST

/* Gives case 0 of j two tensor maps: map 0 over A (named by the reference), map 1 over B
 * (named by the candidate), and a 2 x 1 x 1 cluster for both kernels. */
static void add_maps(amk__run_job *j)
{
    amk__run_case *rc = &j->cases[0];
    rc->nmaps = 2;
    for (int m = 0; m < 2; m++) {
        amk__run_tmap *t = &rc->maps[m];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "tm%d", m);
        t->buf = m;
        t->dtype = AMK__DT_F16;
        t->rank = 2;
        t->dims[0] = t->dims[1] = 4096;
        t->strides[0] = 4096 * 2;
        t->box[0] = 64;
        t->box[1] = 128;
        t->swizzle = 128;
        t->l2_promotion = 256;
    }
    rc->ref.args[0].buf = AMK__RUN_ARG_TMAP(0);
    rc->cand.args[1].buf = AMK__RUN_ARG_TMAP(1);
    for (int i = 0; i < 3; i++)
        rc->ref.launch.cluster[i] = rc->cand.launch.cluster[i] = i == 0 ? 2 : 1;
}

START_TEST(test_run_job_codec_carries_tensor_maps_and_cluster)
{
    amk__run_job *j = malloc(sizeof *j), *k = malloc(sizeof *k);
    ck_assert(j && k);
    make_job(j);
    add_maps(j);
    void *buf;
    size_t len;
    ck_assert_int_eq(amk__run_job_encode(j, &buf, &len), AMK_OK);
    ck_assert_int_eq(amk__run_job_decode(buf, len, k), AMK_OK);
    free(buf);
    const amk__run_case *c = &k->cases[0];
    ck_assert_int_eq(c->nmaps, 2);
    ck_assert_str_eq(c->maps[1].name, "tm1");
    ck_assert_int_eq(c->maps[1].buf, 1);
    ck_assert_int_eq(c->maps[0].strides[0], 8192);
    ck_assert_int_eq(c->maps[0].box[1], 128);
    ck_assert_int_eq(c->maps[0].swizzle, 128);
    ck_assert_int_eq(AMK__RUN_ARG_TMAP_INDEX(c->ref.args[0].buf), 0);
    ck_assert_int_eq(AMK__RUN_ARG_TMAP_INDEX(c->cand.args[1].buf), 1);
    ck_assert_int_eq(c->cand.launch.cluster[0], 2);
    ck_assert_int_eq(c->ref.launch.cluster[1], 1);
    /* Every way a map or a map argument can be out of range is refused. */
    for (int bad = 0; bad < 7; bad++) {
        make_job(k);
        add_maps(k);
        amk__run_case *rc = &k->cases[0];
        switch (bad) {
        case 0: rc->cand.args[1].buf = AMK__RUN_ARG_TMAP(2); break; /* only 2 maps */
        case 1: rc->nmaps = AMK__RUN_MAX_TMAPS + 1; break;
        case 2: rc->nmaps = -1; break;
        case 3: rc->maps[1].buf = rc->nbufs; break;
        case 4: rc->maps[0].rank = AMK_TMAP_MAX_RANK + 1; break;
        case 5: rc->maps[0].dtype = AMK__DT_COUNT; break;
        case 6: memset(rc->maps[0].name, 'x', sizeof rc->maps[0].name); break;
        }
        ck_assert_int_eq(amk__run_job_encode(k, &buf, &len), AMK_OK);
        ck_assert_msg(amk__run_job_decode(buf, len, j) == AMK_EPARSE, "bad map %d accepted", bad);
        free(buf);
    }
    free(j);
    free(k);
}
END_TEST

/* The reference's outputs depend on the maps it names and on its cluster; the candidate's
 * maps and cluster are none of the key's business. */
START_TEST(test_ref_key_follows_the_reference_maps_and_cluster)
{
    amk__run_job *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    ck_assert(a && b);
    make_job(a);
    add_maps(a);
    make_job(b);
    ck_assert(!same_key(a, b, 0)); /* the reference reads a map instead of a pointer */
    for (int change = 0; change < 8; change++) {
        make_job(b);
        add_maps(b);
        ck_assert(same_key(a, b, 0));
        amk__run_case *rc = &b->cases[0];
        int same = change >= 6;
        switch (change) {
        case 0: rc->maps[0].box[0] = 32; break;
        case 1: rc->maps[0].strides[0] += 16; break;
        case 2: rc->maps[0].swizzle = 64; break;
        case 3: rc->maps[0].buf = 2; break;
        case 4: rc->ref.launch.cluster[0] = 1; break;
        case 5: rc->ref.args[0].buf = AMK__RUN_ARG_TMAP(1); break;
        case 6: rc->maps[1].box[1] = 64; break;         /* the candidate's map */
        case 7: rc->cand.launch.cluster[0] = 4; break;
        }
        ck_assert_msg(same_key(a, b, 0) == same, "change %d: key %s", change,
                      same ? "changed" : "kept");
    }
    free(a);
    free(b);
}
END_TEST

/* Constant fills, constant-memory symbols, data and answer files and typed scalars change
 * what the reference computes (or compares against): each is in the key; a fill value of a
 * buffer that is not constant-filled is not. */
START_TEST(test_ref_key_follows_fills_symbols_files_and_scalars)
{
    amk__run_job *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    ck_assert(a && b);
    make_job(a);
    for (int change = 0; change < 9; change++) {
        make_job(b);
        amk__run_case *rc = &b->cases[0];
        int same = change == 8;
        switch (change) {
        case 0: rc->bufs[0].init = AMK__INIT_CONSTANT; break;
        case 1: rc->bufs[0].memory = AMK__MEM_CONSTANT; break;
        case 2: snprintf(rc->bufs[0].symbol, sizeof rc->bufs[0].symbol, "cA"); break;
        case 3: snprintf(rc->bufs[0].data, sizeof rc->bufs[0].data, "/d/a.npy"); break;
        case 4: snprintf(rc->bufs[2].answer, sizeof rc->bufs[2].answer, "/d/c.npy"); break;
        case 5: rc->ref.args[4].bytes = 4; break;
        case 6: rc->ref.args[4].bytes = 8, rc->ref.args[4].bits = 7; break;
        case 7: /* two constant fills with different values */
            a->cases[0].bufs[0].init = rc->bufs[0].init = AMK__INIT_CONSTANT;
            a->cases[0].bufs[0].fill = 1.0;
            rc->bufs[0].fill = 2.0;
            break;
        case 8: rc->bufs[0].fill = 5.0; break; /* not constant-filled: ignored */
        }
        ck_assert_msg(same_key(a, b, 0) == same, "change %d: key %s", change,
                      same ? "changed" : "kept");
        make_job(a);
    }
    free(a);
    free(b);
}
END_TEST

/* The codec carries the new buffer and argument fields (constant memory, data and answer
 * files, scalars, external outputs and their path) and refuses inconsistent ones. */
START_TEST(test_run_job_codec_checks_constant_memory_files_and_scalars)
{
    amk__run_job *k = malloc(sizeof *k), *j = malloc(sizeof *j);
    ck_assert(k && j);
    void *buf;
    size_t len;
    make_job(k);
    amk__run_case *rc = &k->cases[0];
    rc->bufs[1].memory = AMK__MEM_CONSTANT;
    snprintf(rc->bufs[1].symbol, sizeof rc->bufs[1].symbol, "cB");
    rc->bufs[0].init = AMK__INIT_CONSTANT;
    rc->bufs[0].fill = 0.25;
    snprintf(rc->bufs[2].answer, sizeof rc->bufs[2].answer, "/x/answer.npy");
    rc->cand.args[4].bytes = 8;
    rc->cand.args[4].bits = UINT64_C(0x4000000000000000); /* 2.0 as a double */
    ck_assert_int_eq(amk__run_job_encode(k, &buf, &len), AMK_OK);
    ck_assert_int_eq(amk__run_job_decode(buf, len, j), AMK_OK);
    free(buf);
    ck_assert_str_eq(j->cases[0].bufs[1].symbol, "cB");
    ck_assert(j->cases[0].bufs[0].fill == 0.25);
    ck_assert_str_eq(j->cases[0].bufs[2].answer, "/x/answer.npy");
    ck_assert_uint_eq(j->cases[0].cand.args[4].bits, UINT64_C(0x4000000000000000));
    /* an output checked outside amk, and where its bytes go */
    make_job(k);
    k->cases[0].bufs[2].external = 1;
    snprintf(k->outputs, sizeof k->outputs, "/o/0123456789abcdef.");
    ck_assert_int_eq(amk__run_job_encode(k, &buf, &len), AMK_OK);
    ck_assert_int_eq(amk__run_job_decode(buf, len, j), AMK_OK);
    free(buf);
    ck_assert_int_eq(j->cases[0].bufs[2].external, 1);
    ck_assert_str_eq(j->outputs, "/o/0123456789abcdef.");
    for (int bad = 0; bad < 10; bad++) {
        make_job(k);
        rc = &k->cases[0];
        switch (bad) {
        case 0: rc->bufs[0].memory = 2; break;
        case 1: rc->bufs[0].memory = AMK__MEM_CONSTANT; break;        /* no symbol */
        case 2: rc->bufs[2].memory = AMK__MEM_CONSTANT;               /* an output */
                snprintf(rc->bufs[2].symbol, sizeof rc->bufs[2].symbol, "c"); break;
        case 3: snprintf(rc->bufs[2].data, sizeof rc->bufs[2].data, "/d"); break;  /* out */
        case 4: snprintf(rc->bufs[0].answer, sizeof rc->bufs[0].answer, "/a"); break; /* in */
        case 5: memset(rc->bufs[0].data, 'p', sizeof rc->bufs[0].data); break;
        case 6: rc->cand.args[4].bytes = 2; break;
        case 7: rc->bufs[0].external = 1; break;                        /* an input */
        case 8: rc->bufs[2].external = 1;                               /* with an answer */
                snprintf(rc->bufs[2].answer, sizeof rc->bufs[2].answer, "/a"); break;
        case 9: memset(k->outputs, 'p', sizeof k->outputs); break;
        }
        ck_assert_int_eq(amk__run_job_encode(k, &buf, &len), AMK_OK);
        ck_assert_msg(amk__run_job_decode(buf, len, j) == AMK_EPARSE, "bad %d accepted", bad);
        free(buf);
    }
    free(j);
    free(k);
}
END_TEST

/* The vendor's tensor-map encoder: an element type without an encoding, and (where a
 * driver answers) a stride the driver refuses, come back as -1 with a reason; without a
 * driver (or on AMD) the reason says why nothing was encoded. */
START_TEST(test_gpu_tensor_map_encode_reports_failures)
{
    unsigned long long out[16];
    char err[256] = "";
    uint64_t dims[2] = {1024, 1024}, strides[1] = {2048};
    uint32_t box[2] = {64, 64};
    void *base = NULL;
    ck_assert_int_eq(amk__gpu_tensor_map_encode(out, "f128", 2, &err, dims, strides, box, 128,
                                                256, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "f128") || strstr(err, "NVIDIA"), "%s", err);
    if (hipMalloc(&base, (size_t)4 << 20) != hipSuccess) {
        (void)hipGetLastError();
        err[0] = '\0';
        ck_assert_int_eq(amk__gpu_tensor_map_encode(out, "bf16", 2, &err, dims, strides, box,
                                                    128, 256, err, sizeof err), -1);
        ck_assert(err[0] != '\0');
        fprintf(stderr, "  no device: encoding refused: %s\n", err);
        return;
    }
    int rc = amk__gpu_tensor_map_encode(out, "bf16", 2, base, dims, strides, box, 128, 256, err,
                                        sizeof err);
    ck_assert_msg(rc == 0, "a valid bf16 map: %s", err);
    strides[0] = 2050; /* not a multiple of 16 */
    ck_assert_int_eq(amk__gpu_tensor_map_encode(out, "bf16", 2, base, dims, strides, box, 128,
                                                256, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cuTensorMapEncodeTiled"), "%s", err);
    (void)hipFree(base);
}
END_TEST

/* ---------- amk__gpu_parallelism_for (gpu_backend.c) ------------------------------------------ */

START_TEST(test_gpu_parallelism_for_overlaps_compiles)
{
    ck_assert_int_eq(amk__gpu_parallelism_for(1, 16), AMK__GPU_CONFIGS_PER_DEVICE);
    ck_assert_int_eq(amk__gpu_parallelism_for(1, 0), AMK__GPU_CONFIGS_PER_DEVICE);
    ck_assert_int_eq(amk__gpu_parallelism_for(1, 2), 2);        /* at most the pool */
    ck_assert_int_eq(amk__gpu_parallelism_for(1, 1), 1);
    ck_assert_int_eq(amk__gpu_parallelism_for(2, 64), 2 * AMK__GPU_CONFIGS_PER_DEVICE);
    ck_assert_int_eq(amk__gpu_parallelism_for(8, 16), 16);
    ck_assert_int_eq(amk__gpu_parallelism_for(8, 4), 8);        /* at least one per device */
    ck_assert_int_eq(amk__gpu_parallelism_for(0, 16), AMK__GPU_CONFIGS_PER_DEVICE);
}
END_TEST

START_TEST(test_run_job_codec_roundtrip_and_corruption)
{
    amk__run_job *j = calloc(1, sizeof *j), *k = calloc(1, sizeof *k);
    static const char img0[] = "code object zero", img1[] = "another one";
    j->op = AMK__RUN_OP_EVAL;
    j->seed = 1234;
    j->ncodes = 2;
    j->codes[0] = (amk__run_code){img0, sizeof img0, 7};
    j->codes[1] = (amk__run_code){img1, sizeof img1, 8};
    j->ncases = 1;
    amk__run_case *c = &j->cases[0];
    snprintf(c->label, sizeof c->label, "N=10,dtype=f32");
    c->nbufs = 2;
    c->bufs[0] = (amk__run_buf){.name = "x", .dtype = AMK__DT_F32, .role = AMK__ROLE_IN,
                                .init = AMK__INIT_UNIFORM, .count = 10, .reduction = 1};
    c->bufs[1] = (amk__run_buf){.name = "y", .dtype = AMK__DT_F32, .role = AMK__ROLE_OUT,
                                .count = 10, .reduction = 1};
    c->cand.code = 0;
    snprintf(c->cand.entry, sizeof c->cand.entry, "k");
    c->cand.nargs = 3;
    c->cand.args[0].buf = 0;
    c->cand.args[1].buf = 1;
    c->cand.args[2] = (amk__run_arg){.buf = -1, .value = 10};
    c->ref = c->cand;
    c->ref.code = 1;
    void *buf;
    size_t len;
    ck_assert_int_eq(amk__run_job_encode(j, &buf, &len), AMK_OK);
    ck_assert_int_eq(amk__run_job_decode(buf, len, k), AMK_OK);
    ck_assert_uint_eq(k->seed, 1234);
    ck_assert_mem_eq(k->codes[1].image, img1, sizeof img1);
    ck_assert_int_eq(k->cases[0].cand.args[2].value, 10);
    /* truncated, trailing garbage, bad index: all refused */
    ck_assert_int_eq(amk__run_job_decode(buf, len - 1, k), AMK_EPARSE);
    unsigned char *bigger = malloc(len + 1);
    memcpy(bigger, buf, len);
    ck_assert_int_eq(amk__run_job_decode(bigger, len + 1, k), AMK_EPARSE);
    free(bigger);
    free(buf);
    c->cand.args[1].buf = 5; /* only 2 buffers */
    ck_assert_int_eq(amk__run_job_encode(j, &buf, &len), AMK_OK);
    ck_assert_int_eq(amk__run_job_decode(buf, len, k), AMK_EPARSE);
    free(buf);
    free(j);
    free(k);
}
END_TEST

/* A device list that names a device twice or a negative index is refused before any device
 * is asked (so this runs without a GPU). */
START_TEST(test_gpu_init_rejects_bad_device_lists)
{
    static const int twice[] = {1, 0, 1}, negative[] = {-1};
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    amk_backend_opts o = {0};
    o.jobs = 1;
    o.devices = twice;
    o.ndevices = 3;
    ck_assert_int_eq(amk_evaluator_create("gpu", &o, NULL, NULL, &ev, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "device 1 is listed twice"), "%s", d.msg);
    ck_assert_ptr_null(ev);
    o.devices = negative;
    o.ndevices = 1;
    ck_assert_int_eq(amk_evaluator_create("gpu", &o, NULL, NULL, &ev, &d), AMK_EINVAL);
    ck_assert_msg(strstr(d.msg, "negative"), "%s", d.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gpu_host");
    TCase *key = tcase_create("amk__ref_key_make");
    tcase_add_test(key, test_ref_key_ignores_the_candidate);
    tcase_add_test(key, test_ref_key_changes_with_what_makes_the_reference);
    tcase_add_test(key, test_ref_key_follows_the_reference_maps_and_cluster);
    tcase_add_test(key, test_ref_key_follows_fills_symbols_files_and_scalars);

    suite_add_tcase(s, key);
    TCase *wire = tcase_create("amk__run_job_decode");
    tcase_add_test(wire, test_run_job_codec_carries_tensor_maps_and_cluster);
    tcase_add_test(wire, test_run_job_codec_roundtrip_and_corruption);
    tcase_add_test(wire, test_run_job_codec_checks_constant_memory_files_and_scalars);
    suite_add_tcase(s, wire);
    TCase *tmap = tcase_create("amk__gpu_tensor_map_encode");
    tcase_set_timeout(tmap, 60); /* the first runtime call may initialise a driver */
    tcase_add_test(tmap, test_gpu_tensor_map_encode_reports_failures);
    suite_add_tcase(s, tmap);
    TCase *par = tcase_create("amk__gpu_parallelism_for");
    tcase_add_test(par, test_gpu_parallelism_for_overlaps_compiles);
    suite_add_tcase(s, par);
    TCase *init = tcase_create("amk_evaluator_create gpu");
    tcase_add_test(init, test_gpu_init_rejects_bad_device_lists);
    suite_add_tcase(s, init);
    return s;
}

int main(void)
{
    return amk_test_run(suite());
}
#endif
