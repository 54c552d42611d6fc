/* The `gpu` backend's evaluation pipeline (parent side; no GPU call): the run cases of a
 * config built from the compiled spec (buffers, tensor maps, launches, arguments, the check
 * set of shapes), a batch through the compile pool (candidates + references, through the
 * cache) and on to the devices' queue as soon as a config's code is final, the verdicts
 * from the run results, and the re-measure job. The devices, their run workers and the job
 * protocol are in gpu_backend.c. */
#include "gpu_backend_int.h"
#include "evaluator_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXTRA_SHAPES 2

static void append(char *buf, size_t cap, const char *text)
{
    size_t n = strnlen(buf, cap);
    if (!text || !*text || n + 3 >= cap)
        return;
    snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", text);
}

static int find_buf(const amk__run_case *rc, const char *name)
{
    for (int b = 0; b < rc->nbufs; b++)
        if (strcmp(rc->bufs[b].name, name) == 0)
            return b;
    return -1;
}

static int find_map(const amk__run_case *rc, const char *name)
{
    for (int m = 0; m < rc->nmaps; m++)
        if (strcmp(rc->maps[m].name, name) == 0)
            return m;
    return -1;
}

/* A "scalars" entry as a by-value argument: its bytes and size. 0 when name is no scalar. */
static int scalar_arg(const amk_spec *sp, const char *name, amk__run_arg *a)
{
    for (int i = 0; i < amk_spec_n_scalars(sp); i++) {
        amk_spec_scalar sc;
        amk_spec_scalar_at(sp, i, &sc);
        if (strcmp(sc.name, name) != 0)
            continue;
        a->bits = 0;
        if (!strcmp(sc.dtype, "f32")) {
            float f = (float)sc.value;
            uint32_t u;
            memcpy(&u, &f, 4);
            a->bits = u, a->bytes = 4;
        } else if (!strcmp(sc.dtype, "f64")) {
            memcpy(&a->bits, &sc.value, 8);
            a->bytes = 8;
        } else if (!strcmp(sc.dtype, "i32") || !strcmp(sc.dtype, "u32")) {
            a->bits = (uint32_t)sc.ivalue, a->bytes = 4;
        } else {
            a->bits = (uint64_t)sc.ivalue, a->bytes = 8;
        }
        return 1;
    }
    return 0;
}

/* Arguments of a kernel: buffer names become device pointers, tensor-map names the encoded
 * maps (by value), scalars their typed value, other names int32 values. */
static int build_args(const amk_config *c, const amk_limits *lim, int n,
                      const char *(*arg_at)(const amk_spec *, int), const amk__run_case *rc,
                      amk__run_kernel *k, amk_diag *d)
{
    if (n > AMK__RUN_MAX_ARGS)
        return amk_diag_set(d, AMK_ESPEC, "args: not an array of at most %d names",
                            AMK__RUN_MAX_ARGS);
    k->nargs = n;
    for (int i = 0; i < n; i++) {
        const char *a = arg_at(c->spec, i);
        int b = find_buf(rc, a), m = find_map(rc, a);
        k->args[i].buf = b >= 0 ? b : m >= 0 ? AMK__RUN_ARG_TMAP(m) : -1;
        k->args[i].value = 0;
        k->args[i].bits = 0;
        k->args[i].bytes = 0;
        if (b >= 0 || m >= 0 || scalar_arg(c->spec, a, &k->args[i]))
            continue;
        int64_t v;
        if (amk_config_eval(c, lim, a, &v, d) != AMK_OK)
            return amk_diag_prefix(d, "args[%d] '%s'", i, a);
        if (v < INT32_MIN || v > INT32_MAX)
            return amk_diag_set(d, AMK_ECONFIG, "args[%d] '%s' = %lld is outside int32", i, a,
                                (long long)v);
        k->args[i].value = (int32_t)v;
    }
    return AMK_OK;
}

/* The absolute paths of buffer b's data / answer file. */
static int data_paths(const amk_spec *sp, const amk_spec_buffer *b, int i, amk__run_buf *rb,
                      amk_diag *d)
{
    const char *rel[2] = {b->data, b->answer};
    char *dst[2] = {rb->data, rb->answer};
    for (int k = 0; k < 2; k++) {
        dst[k][0] = '\0';
        if (!rel[k])
            continue;
        char *dir = realpath(amk_spec_dir(sp), NULL);
        int n = snprintf(dst[k], AMK__RUN_PATH_MAX, "%s/%s", dir ? dir : amk_spec_dir(sp), rel[k]);
        free(dir);
        if (n < 0 || n >= AMK__RUN_PATH_MAX)
            return amk_diag_set(d, AMK_EUNSUPPORTED, "buffers[%d] %s: the path of '%s' is over %d "
                                "bytes", i, b->name, rel[k], AMK__RUN_PATH_MAX - 1);
    }
    return AMK_OK;
}

/* A data or answer file must hold the buffer's bytes at this shape (a file fits one shape:
 * other shapes of the check set are left out). */
static int data_fits(const amk__run_buf *rb, int i, amk_diag *d)
{
    const char *f[2] = {rb->data, rb->answer};
    for (int k = 0; k < 2; k++) {
        amk_data_info in;
        if (!f[k][0])
            continue;
        if (amk_data_probe(f[k], &in, d) != AMK_OK)
            return amk_diag_prefix(d, "buffers[%d] %s", i, rb->name);
        int64_t want = rb->count * (int64_t)amk__dtype_size(rb->dtype);
        if (in.bytes != want)
            return amk_diag_set(d, AMK_ECONFIG, "buffers[%d] %s: %s holds %lld bytes, the "
                                "buffer needs %lld (%lld elements)", i, rb->name, f[k],
                                (long long)in.bytes, (long long)want, (long long)rb->count);
    }
    return AMK_OK;
}

/* One case of a job: c's buffers, candidate and reference kernels, tolerance. */
/* The spec's peer for c's shape (none when AMK_BENCH_PEER=0). */
static int build_peer(const amk_config *c, const amk_limits *lim, amk__run_case *rc,
                      amk_diag *d)
{
    amk_spec_peer p;
    amk_spec_get_peer(c->spec, &p);
    const char *off = getenv("AMK_BENCH_PEER");
    memset(&rc->peer, 0, sizeof rc->peer);
    if (p.op == AMK_PEER_NONE || (off && strcmp(off, "0") == 0))
        return AMK_OK;
    rc->peer.op = p.op == AMK_PEER_GEMM ? AMK__PEER_GEMM : AMK__PEER_COPY;
    rc->peer.a = p.a;
    rc->peer.b = p.b;
    rc->peer.c = p.c;
    if (p.op == AMK_PEER_GEMM &&
        (amk_config_eval_expr(c, lim, p.m, &rc->peer.m, d) != AMK_OK ||
         amk_config_eval_expr(c, lim, p.n, &rc->peer.n, d) != AMK_OK ||
         amk_config_eval_expr(c, lim, p.k, &rc->peer.k, d) != AMK_OK))
        return amk_diag_prefix(d, "peer");
    return AMK_OK;
}

static int build_case(const amk_config *c, const amk_limits *lim, int code_cand, int code_ref,
                      amk__run_case *rc, amk_diag *d)
{
    const amk_spec *sp = c->spec;
    amk_spec_tolerance tol;
    amk_spec_get_tolerance(sp, &tol);
    memset(rc, 0, sizeof *rc);
    amk_shape_format(sp, &c->shape, rc->label, sizeof rc->label);
    int nb = amk_spec_n_buffers(sp);
    if (nb < 1 || nb > AMK__RUN_MAX_BUFS)
        return amk_diag_set(d, AMK_ESPEC, "buffers: 1 to %d buffers expected", AMK__RUN_MAX_BUFS);
    int64_t red_all = 1;
    if (amk_config_eval_expr(c, lim, tol.reduction, &red_all, d) != AMK_OK)
        return amk_diag_prefix(d, "tolerance.reduction");
    rc->rtol_scale = tol.rtol_scale;
    rc->atol = tol.atol;
    rc->nbufs = nb;
    static const int roles[] = {[AMK_BUFFER_IN] = AMK__ROLE_IN, [AMK_BUFFER_OUT] = AMK__ROLE_OUT,
                                [AMK_BUFFER_INOUT] = AMK__ROLE_INOUT,
                                [AMK_BUFFER_SCRATCH] = AMK__ROLE_SCRATCH};
    for (int i = 0; i < nb; i++) {
        amk_spec_buffer b;
        amk_spec_buffer_at(sp, i, &b);
        amk__run_buf *rb = &rc->bufs[i];
        snprintf(rb->name, sizeof rb->name, "%s", b.name);
        const char *dname = strcmp(b.dtype, "input") == 0
                                ? amk_spec_dtype_name(sp, c->shape.dtype)
                                : b.dtype;
        rb->dtype = amk__dtype_from_name(dname);
        if (rb->dtype < 0)
            return amk_diag_set(d, AMK_EUNSUPPORTED, "buffers[%d] %s: dtype '%s' is not "
                                "supported by the gpu backend", i, rb->name, dname);
        rb->role = roles[b.role];
        rb->init = amk__init_from_name(b.init);
        if (rb->init < 0)
            return amk_diag_set(d, AMK_ESPEC, "buffers[%d] %s: unknown init '%s'", i, rb->name,
                                b.init);
        if (data_paths(sp, &b, i, rb, d) != AMK_OK)
            return d ? d->code : AMK_ESPEC;
        rb->fill = b.value;
        rb->external = b.external;
        rb->memory = b.constant_memory ? AMK__MEM_CONSTANT : AMK__MEM_GLOBAL;
        snprintf(rb->symbol, sizeof rb->symbol, "%s", b.symbol ? b.symbol : "");
        if (amk_config_eval_expr(c, lim, b.count, &rb->count, d) != AMK_OK)
            return amk_diag_prefix(d, "buffers[%d] %s: count", i, rb->name);
        if (rb->count < 1 || rb->count > ((int64_t)1 << 40) / (int64_t)amk__dtype_size(rb->dtype))
            return amk_diag_set(d, AMK_ECONFIG, "buffers[%d] %s: %lld elements is out of range",
                                i, rb->name, (long long)rb->count);
        if (data_fits(rb, i, d) != AMK_OK)
            return d ? d->code : AMK_ECONFIG;
        int64_t r = red_all;
        if (b.tolerance_reduction &&
            amk_config_eval_expr(c, lim, b.tolerance_reduction, &r, d) != AMK_OK)
            return amk_diag_prefix(d, "buffers[%d] %s: tolerance_reduction", i, rb->name);
        rb->reduction = (double)(r < 1 ? 1 : r);
    }
    /* Tensor maps (validated for this config and shape by amk_config_tensor_map). */
    rc->nmaps = amk_spec_n_tensor_maps(sp);
    if (rc->nmaps > AMK__RUN_MAX_TMAPS)
        return amk_diag_set(d, AMK_ESPEC, "tensor_maps: at most %d", AMK__RUN_MAX_TMAPS);
    for (int m = 0; m < rc->nmaps; m++) {
        amk_tensor_map tm;
        amk__run_tmap *rt = &rc->maps[m];
        if (amk_config_tensor_map(c, lim, m, &tm, d) != AMK_OK)
            return d ? d->code : AMK_ECONFIG;
        snprintf(rt->name, sizeof rt->name, "%s", tm.name);
        rt->buf = find_buf(rc, tm.buffer);
        rt->dtype = amk__dtype_from_name(tm.dtype);
        if (rt->buf < 0 || rt->dtype < 0)
            return amk_diag_set(d, AMK_ESPEC, "tensor map '%s': buffer %s (%s) unknown to the "
                                "gpu backend", tm.name, tm.buffer, tm.dtype);
        rt->rank = tm.rank;
        for (int i = 0; i < tm.rank; i++) {
            rt->dims[i] = tm.dims[i];
            rt->box[i] = tm.box[i];
            if (i + 1 < tm.rank)
                rt->strides[i] = tm.strides[i];
        }
        rt->swizzle = tm.swizzle;
        rt->l2_promotion = tm.l2_promotion;
        rt->oob = 0;
    }
    /* Candidate. */
    rc->cand.code = code_cand;
    snprintf(rc->cand.entry, sizeof rc->cand.entry, "%s", amk_spec_entry(sp));
    if (amk_config_launch(c, lim, &rc->cand.launch, d) != AMK_OK)
        return amk_diag_prefix(d, "launch");
    if (build_args(c, lim, amk_spec_n_args(sp), amk_spec_arg, rc, &rc->cand, d) != AMK_OK)
        return d ? d->code : AMK_ESPEC;
    if (build_peer(c, lim, rc, d) != AMK_OK)
        return d ? d->code : AMK_ESPEC;
    /* Reference. */
    rc->ref.code = code_ref;
    if (code_ref >= 0) {
        amk_spec_reference ref;
        amk_spec_get_reference(sp, &ref);
        snprintf(rc->ref.entry, sizeof rc->ref.entry, "%s", ref.entry);
        amk_config at; /* the config the reference runs at: its launch and values */
        if (amk_config_reference_config(c, lim, &at, d) != AMK_OK ||
            amk_config_reference_launch(&at, lim, &rc->ref.launch, d) != AMK_OK)
            return d ? d->code : AMK_ESPEC;
        if (build_args(&at, lim, amk_spec_n_reference_args(sp), amk_spec_reference_arg, rc,
                       &rc->ref, d) != AMK_OK)
            return amk_diag_prefix(d, "reference");
    }
    return AMK_OK;
}

static int64_t case_bytes(const amk__run_case *rc)
{
    int64_t s = 0;
    for (int b = 0; b < rc->nbufs; b++)
        s += rc->bufs[b].count * (int64_t)amk__dtype_size(rc->bufs[b].dtype);
    return s;
}

/* The check set: c's own shape (benchmarked), then up to MAX_EXTRA_SHAPES named shapes of
 * the spec with the same dtype, valid for c's params, and at most a quarter of c's bytes
 * (small odd shapes catch edge handling cheaply), smallest first. */
static int build_cases(amk__gpu_state *st, const amk_config *c, amk__run_job *j, amk_diag *d)
{
    const amk_limits *lim = &st->target.limits;
    int rc = build_case(c, lim, 0, 1, &j->cases[0], d);
    if (rc != AMK_OK)
        return rc;
    j->cases[0].bench = 1;
    j->ncases = 1;
    int64_t main_bytes = case_bytes(&j->cases[0]);
    amk__run_case *extra = malloc(sizeof *extra);
    if (!extra)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    int ns = amk_spec_n_shapes(c->spec);
    for (int pass = 0; pass < MAX_EXTRA_SHAPES; pass++) {
        int best = -1;
        int64_t best_bytes = 0;
        amk__run_case best_case;
        for (int i = 0; i < ns; i++) {
            amk_config c2 = *c;
            amk_diag dd = {0};
            amk_spec_shape(c->spec, i, &c2.shape);
            if (c2.shape.dtype != c->shape.dtype)
                continue;
            char label[160];
            amk_shape_format(c->spec, &c2.shape, label, sizeof label);
            int seen = 0;
            for (int k = 0; k < j->ncases; k++)
                seen |= strcmp(j->cases[k].label, label) == 0;
            if (seen || amk_config_check(&c2, lim, &dd) != AMK_OK ||
                build_case(&c2, lim, 0, 1, extra, &dd) != AMK_OK)
                continue;
            int64_t bytes = case_bytes(extra);
            if (bytes * 4 > main_bytes || (best >= 0 && bytes >= best_bytes))
                continue;
            best = i;
            best_bytes = bytes;
            best_case = *extra;
        }
        if (best < 0)
            break;
        j->cases[j->ncases++] = best_case;
    }
    free(extra);
    return AMK_OK;
}

/* Where a compile failed: status and the compiler's words. */
static void compile_verdict(const amk_code *code, amk_verdict *v)
{
    v->status = code->status;
    v->correct = -1;
    v->compile_ms = code->compile_ms;
    v->cache_hit = code->cache_hit;
    snprintf(v->reason, sizeof v->reason, "%s", code->reason);
    snprintf(v->notes, sizeof v->notes, "%s", code->notes);
}

/* The name a kernel has in its code object: the compiler's lowered name of the spec's entry
 * (a plain C++ __global__ function is mangled), kept with the code object. */
static void use_lowered_entry(amk__run_kernel *k, const amk_code *const *codes, int n)
{
    if (k->code >= 0 && k->code < n && codes[k->code]->entry[0])
        snprintf(k->entry, sizeof k->entry, "%s", codes[k->code]->entry);
}

/* The run job of a compiled config. On failure s->job stays NULL and s->setup says why. */
static void prepare_run(amk__gpu_state *st, const amk_config *c, const amk_code *cand,
                        const amk_code *ref, amk__run_slot *s)
{
    amk__run_job *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(s->setup, sizeof s->setup, "gpu backend: out of memory");
        return;
    }
    amk_diag d = {0};
    j->op = AMK__RUN_OP_EVAL;
    j->device = -1; /* the device thread that takes it fills in its own */
    j->bench = st->bench;
    j->ncodes = 2;
    j->codes[0] = (amk__run_code){cand->image, cand->size, amk_hash64(cand->image, cand->size)};
    j->codes[1] = (amk__run_code){ref->image, ref->size, amk_hash64(ref->image, ref->size)};
    if (build_cases(st, c, j, &d) != AMK_OK) {
        snprintf(s->setup, sizeof s->setup, "cannot set up the run: %s", d.msg);
        free(j);
        return;
    }
    const amk_code *codes[2] = {cand, ref};
    for (int k = 0; k < j->ncases; k++) {
        use_lowered_entry(&j->cases[k].cand, codes, 2);
        use_lowered_entry(&j->cases[k].ref, codes, 2);
    }
    j->seed = st->seed;
    j->check_threads = st->check_threads;
    for (int b = 0; st->outputs_dir[0] && b < j->cases[0].nbufs; b++)
        if (j->cases[0].bufs[b].external) {
            char id[17];
            amk_config_id(c, id);
            snprintf(j->outputs, sizeof j->outputs, "%s/%s.", st->outputs_dir, id);
            break;
        }
    s->job = j;
}


/* The peer timed beside the candidate: its latency and the ratio, or nothing (the run
 * worker's notes say why). */
static void peer_into(amk_verdict *v, const amk__run_result *res)
{
    if (!res->peer_timed || !(res->peer_stats.median_us > 0) || !(v->latency_us > 0))
        return;
    snprintf(v->peer, sizeof v->peer, "%s", res->peer);
    v->peer_us = res->peer_stats.median_us;
    v->vs_peer = v->peer_us / v->latency_us;
}

/* The device's state and the timing regime of a measurement, as the verdict reports them. */
static void observed_into(amk_verdict *v, const amk__bench_stats *st)
{
    const amk__obs *o = &st->obs;
    snprintf(v->clock_regime, sizeof v->clock_regime, "%s", amk__regime_name(st->regime));
    if (o->samples == 0)
        return;
    v->sm_mhz = o->sm_mhz;
    v->sm_mhz_min = o->sm_mhz_min;
    v->sm_mhz_max = o->sm_mhz_max;
    v->mem_mhz = o->mem_mhz;
    v->power_w = amk__obs_mean_power(o);
    v->temp_c = o->temp_c;
    amk__obs_throttle_text(o->throttle, v->throttle, sizeof v->throttle);
    v->energy_uj = st->energy_uj;
    if (st->energy_ticks > 0) { /* measured over a counter window, not estimated */
        v->energy_window_ms = st->energy_window_ms;
        v->energy_ticks = st->energy_ticks;
    }
}

/* The verdict of a config that reached the run stage. */
static void run_verdict(const amk_config *c, const amk_code *cand, const amk_code *ref,
                        const amk__run_slot *s, amk_verdict *v)
{
    v->compile_ms = cand->compile_ms;
    v->cache_hit = cand->cache_hit;
    v->correct = -1;
    if (ref->status != AMK_STATUS_OK) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "cannot check: the spec's reference kernel did "
                 "not compile (%s): %s", amk_status_name(ref->status), ref->reason);
        return;
    }
    if (!s->job) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "%s", s->setup);
        return;
    }
    const amk__run_job *j = s->job;
    const amk__run_result *res = &s->res;
    v->seed = j->seed;
    v->status = (amk_status)res->status;
    v->correct = res->checked == j->ncases ? 1 : 0;
    snprintf(v->reason, sizeof v->reason, "%s", res->reason);
    snprintf(v->regime, sizeof v->regime, "%s", res->regime);
    v->notes[0] = '\0';
    char shapes[200];
    snprintf(shapes, sizeof shapes, "gpu %d", s->gpu); /* which device ran it */
    append(v->notes, sizeof v->notes, shapes);
    snprintf(shapes, sizeof shapes, "checked %d/%d shape%s", res->checked, j->ncases,
             j->ncases == 1 ? "" : "s");
    for (int k = 1; k < j->ncases && k < 3; k++) {
        size_t n = strlen(shapes);
        snprintf(shapes + n, sizeof shapes - n, "%s%s", k == 1 ? " (+" : ", +",
                 j->cases[k].label);
    }
    if (j->ncases > 1)
        strncat(shapes, ")", sizeof shapes - strlen(shapes) - 1);
    append(v->notes, sizeof v->notes, shapes);
    append(v->notes, sizeof v->notes, res->notes);
    amk_spec_reference rj;
    amk_spec_get_reference(c->spec, &rj);
    if (rj.default_config && amk_spec_n_reference_vary(c->spec) == 0)
        append(v->notes, sizeof v->notes, "reference: the default config's output (no "
               "independent reference: weaker, a config is only checked to agree with the "
               "default)");
    else if (rj.default_config) {
        char with[200] = "";
        size_t n = 0;
        for (int k = 0; k < amk_spec_n_reference_vary(c->spec) && n < sizeof with; k++) {
            int p = amk_spec_reference_vary(c->spec, k);
            n += (size_t)snprintf(with + n, sizeof with - n, "%s%s", k ? ", " : "",
                                  amk_spec_param_name(c->spec, p));
        }
        char note[320];
        snprintf(note, sizeof note, "reference: the default config's output with this "
                 "config's %s (no independent reference: weaker)", with);
        append(v->notes, sizeof v->notes, note);
    }
    append(v->notes, sizeof v->notes, cand->notes);
    if (res->status == AMK_STATUS_OK && res->nstats >= 1 && isfinite(res->stats[0].median_us)) {
        v->latency_us = res->stats[0].median_us;
        v->latency_kind = AMK_LAT_MEASURED;
        v->spread = res->stats[0].spread;
        observed_into(v, &res->stats[0]);
        peer_into(v, res);
    } else if (res->status == AMK_STATUS_OK) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "the run worker reported no measurement");
    }
}

/* What config i's trial cost the loop's wall clock (amk_verdict.cost_s): its compile's
 * share of the pool, which compiles that many at once (a cache hit: the lookup), and its
 * run job's share of the devices, which run one job each at a time. Compiles overlap the
 * runs of earlier configs, so this over-counts a batch's wall time; a search weighing
 * configs by cost needs their ratios, and a large tile that compiles for seconds or a
 * slow kernel timed longer shows in them. The job's set-up that later jobs reuse (a cold
 * device's warm-up, the reference cache, the peer library: amk__run_result.setup_ms) is
 * left out and goes to *setup_s: charged to whichever config came first, it made the
 * first row of every recording cost 1 to 1.5 s beside medians of 0.07 to 0.3 s on an H100.
 * NAN when nothing was compiled (*setup_s NAN when no job ran). */
static double trial_cost(const amk__gpu_state *st, const amk_code *cand, const amk__run_slot *s,
                         double *setup_s)
{
    *setup_s = NAN;
    if (!isfinite(cand->compile_ms))
        return NAN;
    int workers = amk__worker_pool_size(amk__compiler_pool(st->cc));
    double cost = cand->compile_ms / 1e3 / (workers > 0 ? workers : 1);
    if (s && s->job) {
        int ndev = st->ndev > 0 ? st->ndev : 1;
        double setup = s->res.setup_ms > 0 ? fmin(s->res.setup_ms / 1e3, s->run_s) : 0.0;
        cost += (s->run_s - setup) / ndev;
        *setup_s = setup / ndev;
    }
    return cost;
}

/* One batch on its way through the compile pool and the devices. */
typedef struct batch {
    amk__gpu_state *st;
    const amk_config *const *cfgs;
    size_t n;
    const amk_code *codes;     /* filled by the compile service */
    const int *unit_of, *ref_of;
    /* Who waits for a unit, so that a final unit costs its own configs, not a scan: */
    const int *cand_cfg;       /* per unit: the config whose candidate it is, -1 */
    const int *ref_first;      /* per unit: the first config checked against it, -1 */
    const int *ref_next;       /* per config: the next one with the same reference, -1 */
    unsigned char *final;      /* per unit: its code is final */
    unsigned char *handled;    /* per config: queued, or nothing to run */
    amk__run_slot *slots;           /* per config */
    size_t queued;
} batch;

/* Config i goes to the devices' queue once its candidate and reference are both final
 * and compiled (once). */
static void try_queue(batch *b, int i)
{
    amk__gpu_state *st = b->st;
    int cu = b->unit_of[i], ru = b->ref_of[i];
    if (b->handled[i] || cu < 0 || ru < 0 || !b->final[cu] || !b->final[ru])
        return;
    b->handled[i] = 1;
    if (b->codes[cu].status != AMK_STATUS_OK || b->codes[ru].status != AMK_STATUS_OK)
        return;
    amk__run_slot *s = &b->slots[i];
    prepare_run(st, b->cfgs[i], &b->codes[cu], &b->codes[ru], s);
    if (!s->job)
        return;
    pthread_mutex_lock(&st->mu);
    s->next = NULL;
    if (st->tail)
        st->tail->next = s;
    else
        st->head = s;
    st->tail = s;
    b->queued++;
    pthread_cond_signal(&st->work);
    pthread_mutex_unlock(&st->mu);
}

/* Compile callback (calling thread): unit u is final. The configs waiting for it (its
 * own config for a candidate, every config checked against it for a reference, in
 * proposal order) go to the devices' queue when their other unit is final too. */
static void unit_final(size_t u, void *ud)
{
    batch *b = ud;
    b->final[u] = 1;
    amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: unit %zu compiled", amk_now_s(), u);
    if (b->cand_cfg[u] >= 0)
        try_queue(b, b->cand_cfg[u]);
    for (int i = b->ref_first[u]; i >= 0; i = b->ref_next[i])
        try_queue(b, i);
}

int amk__gpu_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out)
{
    amk__gpu_state *st = state;
    amk_compile_unit *units = calloc(2 * n + 1, sizeof *units);
    amk_code *codes = calloc(2 * n + 1, sizeof *codes);
    int *unit_of = malloc((n + 1) * sizeof *unit_of); /* candidate unit of config i, -1 */
    int *ref_of = malloc((n + 1) * sizeof *ref_of);   /* reference unit of config i, -1 */
    int *cand_cfg = malloc((2 * n + 1) * sizeof *cand_cfg);
    int *ref_first = malloc((2 * n + 1) * sizeof *ref_first);
    int *ref_next = malloc((n + 1) * sizeof *ref_next);
    unsigned char *final = calloc(2 * n + 1, 1);
    unsigned char *handled = calloc(n + 1, 1);
    amk__run_slot *slots = calloc(n + 1, sizeof *slots);
    size_t nu = 0;
    int rc = AMK_OK;
    if (!units || !codes || !unit_of || !ref_of || !cand_cfg || !ref_first || !ref_next ||
        !final || !handled || !slots) {
        rc = AMK_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        amk_verdict *v = &out[i];
        amk_diag d = {0};
        unit_of[i] = ref_of[i] = -1;
        snprintf(v->device, sizeof v->device, "%s", st->device);
        if (amk__compile_unit_config(cfgs[i], st->info.arch, &units[nu], &d) != AMK_OK) {
            v->status = AMK_STATUS_COMPILE_ERROR;
            v->correct = -1;
            snprintf(v->reason, sizeof v->reason, "cannot build the source: %s", d.msg);
            continue;
        }
        unit_of[i] = (int)nu++;
        /* One reference unit per (spec, dtype, "vary" values) of the batch. */
        for (size_t k = 0; k < i && ref_of[i] < 0; k++)
            if (ref_of[k] >= 0 && amk_config_same_reference(cfgs[k], cfgs[i]))
                ref_of[i] = ref_of[k];
        if (ref_of[i] < 0) {
            if (amk__compile_unit_reference(cfgs[i], st->info.arch, &units[nu], &d) == AMK_OK) {
                ref_of[i] = (int)nu++;
            } else {
                v->status = AMK_STATUS_RUN_ERROR;
                v->correct = -1;
                snprintf(v->reason, sizeof v->reason, "cannot check: cannot build the "
                         "reference source: %s", d.msg);
                amk__compile_unit_clear(&units[unit_of[i]]);
                unit_of[i] = -1;
                nu--;
                continue;
            }
        }
    }
    for (size_t k = 0; k < nu; k++)
        cand_cfg[k] = ref_first[k] = -1;
    for (size_t i = n; i-- > 0;) { /* backwards: the lists come out in proposal order */
        ref_next[i] = -1;
        if (unit_of[i] < 0)
            continue;
        cand_cfg[unit_of[i]] = (int)i;
        ref_next[i] = ref_first[ref_of[i]];
        ref_first[ref_of[i]] = (int)i;
    }
    if (nu) {
        batch b = {.st = st, .cfgs = cfgs, .n = n, .codes = codes, .unit_of = unit_of,
                   .ref_of = ref_of, .cand_cfg = cand_cfg, .ref_first = ref_first,
                   .ref_next = ref_next, .final = final, .handled = handled, .slots = slots};
        amk_diag d = {0};
        pthread_mutex_lock(&st->mu);
        st->finished = 0;
        pthread_mutex_unlock(&st->mu);
        amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: batch of %zu configs, %zu units to compile",
                amk_now_s(), n, nu);
        rc = amk__compiler_run_cb(st->cc, units, nu, codes, unit_final, &b, &d);
        /* Whatever happened, the code objects stay until every queued run is over. */
        pthread_mutex_lock(&st->mu);
        while (st->finished < b.queued)
            pthread_cond_wait(&st->done, &st->mu);
        pthread_mutex_unlock(&st->mu);
        amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: batch done", amk_now_s());
        if (rc != AMK_OK) {
            amk_log(AMK_LOG_ERROR, "gpu: compile service failed: %s", d.msg);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (unit_of[i] < 0)
            continue;
        const amk_code *cand = &codes[unit_of[i]];
        if (cand->status != AMK_STATUS_OK)
            compile_verdict(cand, &out[i]);
        else
            run_verdict(cfgs[i], cand, &codes[ref_of[i]], &slots[i], &out[i]);
        out[i].cost_s = trial_cost(st, cand, cand->status == AMK_STATUS_OK ? &slots[i] : NULL,
                                   &out[i].setup_s);
    }
done:
    for (size_t k = 0; k < nu; k++) {
        amk__compile_unit_clear(&units[k]);
        amk__code_clear(&codes[k]);
    }
    for (size_t i = 0; slots && i < n; i++)
        free(slots[i].job);
    free(units);
    free(codes);
    free(unit_of);
    free(ref_of);
    free(cand_cfg);
    free(ref_first);
    free(ref_next);
    free(final);
    free(handled);
    free(slots);
    return rc;
}

int amk__gpu_remeasure(void *state, const amk_config *a, const amk_config *b, double decide_gain,
                       double lat_us[2], double spread[2], double *sm_mhz, amk_diag *d)
{
    amk__gpu_state *st = state;
    amk_compile_unit units[2];
    amk_code codes[2];
    int rc = AMK_OK;
    memset(units, 0, sizeof units);
    memset(codes, 0, sizeof codes);
    lat_us[0] = lat_us[1] = spread[0] = spread[1] = *sm_mhz = NAN;
    if (a->spec != b->spec || a->shape.dtype != b->shape.dtype ||
        memcmp(a->shape.dims, b->shape.dims, sizeof a->shape.dims) != 0)
        return amk_diag_set(d, AMK_EINVAL, "remeasure: configs of different kernels or shapes");
    amk__run_job *j = calloc(1, sizeof *j);
    if (!j)
        return amk_diag_set(d, AMK_ENOMEM, "remeasure: out of memory");
    if ((rc = amk__compile_unit_config(a, st->info.arch, &units[0], d)) != AMK_OK ||
        (rc = amk__compile_unit_config(b, st->info.arch, &units[1], d)) != AMK_OK ||
        (rc = amk__compiler_run(st->cc, units, 2, codes, d)) != AMK_OK)
        goto done;
    for (int i = 0; i < 2; i++)
        if (codes[i].status != AMK_STATUS_OK) {
            rc = amk_diag_set(d, AMK_EBACKEND, "remeasure: config %c: %s: %s", 'a' + i,
                              amk_status_name(codes[i].status), codes[i].reason);
            goto done;
        }
    j->op = AMK__RUN_OP_REMEASURE;
    j->device = st->devs[0]->index; /* re-measures stay on one device */
    j->bench = st->bench;
    /* A re-measure decides a close call: no screening, and both medians pinned to a 95% CI
     * of +-0.25%, a quarter of the default keep margin, or the full window. It used to run
     * the full window always, and 31 of the 72 trials of the H100 race on gemm_hopper were
     * close calls, each waiting for it in the keep step. With decide_gain it also ends once
     * the keep rule's answer at that margin is known (amk__bench_pair_decided). */
    j->bench.ci_rel = 0.0025;
    j->bench.decide_gain = isfinite(decide_gain) && decide_gain > 0 ? decide_gain : 0;
    j->bench.beat_us = NAN;
    j->bench.energy_window_s = 0; /* a re-measure compares latencies only */
    j->ncodes = 2;
    for (int i = 0; i < 2; i++)
        j->codes[i] = (amk__run_code){codes[i].image, codes[i].size,
                                      amk_hash64(codes[i].image, codes[i].size)};
    amk__run_case tmp;
    if ((rc = build_case(a, &st->target.limits, 0, -1, &j->cases[0], d)) != AMK_OK ||
        (rc = build_case(b, &st->target.limits, 1, -1, &tmp, d)) != AMK_OK)
        goto done;
    j->cases[0].bench = 1;
    j->cases[0].peer.op = AMK__PEER_NONE; /* a re-measure times the two configs only */
    j->ncases = 1;
    /* b's tensor maps (its own boxes) follow a's in the case; its arguments follow them.
     * With a's maps, b's pipeline waited for boxes it does not load (gemm_hopper: a
     * run_timeout on every re-measure). */
    amk__run_case *c0 = &j->cases[0];
    /* One set of buffers serves both: each as large as either config needs. A buffer sized
     * by a param (gemm_hopper's stream-K workspace and pieces) was a's size, and a P4
     * candidate re-measured beside a P1 incumbent wrote past it: an illegal address, and
     * every such close call left to the first measurements. */
    for (int i = 0; i < c0->nbufs && i < tmp.nbufs; i++)
        if (tmp.bufs[i].count > c0->bufs[i].count)
            c0->bufs[i].count = tmp.bufs[i].count;
    if (c0->nmaps + tmp.nmaps > AMK__RUN_MAX_TMAPS) {
        rc = amk_diag_set(d, AMK_EINVAL, "remeasure: more than %d tensor maps",
                          AMK__RUN_MAX_TMAPS);
        goto done;
    }
    for (int i = 0; i < tmp.cand.nargs; i++)
        if (tmp.cand.args[i].buf < -1)
            tmp.cand.args[i].buf =
                AMK__RUN_ARG_TMAP(c0->nmaps + AMK__RUN_ARG_TMAP_INDEX(tmp.cand.args[i].buf));
    for (int m = 0; m < tmp.nmaps; m++)
        c0->maps[c0->nmaps++] = tmp.maps[m];
    j->other = tmp.cand;
    const amk_code *cp[2] = {&codes[0], &codes[1]};
    use_lowered_entry(&j->cases[0].cand, cp, 2);
    use_lowered_entry(&j->other, cp, 2);
    j->seed = st->seed;
    j->check_threads = st->check_threads;
    amk__run_result res;
    amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: re-measure", amk_now_s());
    amk__gpu_send_job(st->devs[0]->run, st->run_timeout_s, j, &res);
    amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: re-measure done: %s; %s", amk_now_s(), res.notes,
            res.profile);
    if (res.status != AMK_STATUS_OK || res.nstats != 2) {
        rc = amk_diag_set(d, res.status == AMK_STATUS_RUN_TIMEOUT ? AMK_ETIMEDOUT : AMK_EBACKEND,
                          "remeasure: %s: %s", amk_status_name((amk_status)res.status),
                          res.reason);
        goto done;
    }
    for (int i = 0; i < 2; i++) {
        /* How precisely each median is known (a re-measure exists to pin them): the CI's
         * half-width, not the launches' spread (2-5 % IQR at 8192^3 under the power cap
         * made the keep rule's margin refuse gains every re-measure had pinned). */
        double ci = amk__bench_ci_rel(&res.stats[i]);
        lat_us[i] = res.stats[i].median_us;
        spread[i] = isfinite(ci) ? ci : res.stats[i].spread;
    }
    *sm_mhz = res.stats[0].obs.sm_mhz; /* one window: both configs saw these readings */
done:
    for (int i = 0; i < 2; i++) {
        amk__compile_unit_clear(&units[i]);
        amk__code_clear(&codes[i]);
    }
    free(j);
    return rc;
}
