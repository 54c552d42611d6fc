/* The run worker's evaluation of a job on its device: host buffers kept across jobs and the
 * reference cache, device buffer sets (allocation, tensor maps, arguments, upload, download),
 * the correctness check of a case, the benchmark of a case, and an EVAL job. The worker's
 * state, device query, code objects and job dispatch are in runtime.c. */
#include "runtime_int.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- host buffers kept across jobs ----------------------------------------------
 * A trial on a big shape moves hundreds of MiB through host memory. Fresh malloc'd buffers
 * pay a page fault per 4 KiB in every job, and pageable memory crosses the bus at a fraction
 * of the link's speed, so the run worker keeps its host buffers (pinned where the runtime
 * gives pinned memory) and grows them when a job needs more. Past HOST_KEEP_MAX in all, the
 * ones the last job did not use go (another kernel's or shape's); what one job needs stays.
 * Nothing is read that the job did not write first (inputs filled from the job's seed,
 * outputs downloaded before they are compared), except a reference cache entry, which is
 * read only under a key equal to the job's case (memcmp, not just the hash). */
#define HOST_KEEP_MAX ((size_t)4 << 30)
#define HOST_ROUND ((size_t)64 << 10)

static void host_release(amk__host_buf *h)
{
    if (h->p) {
        if (h->pinned)
            (void)hipHostFree(h->p);
        else
            free(h->p);
    }
    memset(h, 0, sizeof *h);
}

/* h with room for `bytes` (contents kept unless it must grow); NULL when out of memory. */
static void *host_ensure(amk__host_buf *h, size_t bytes)
{
    h->job = amk__rw.jobs;
    if (h->p && h->cap >= bytes)
        return h->p;
    host_release(h);
    size_t cap = (bytes + HOST_ROUND - 1) / HOST_ROUND * HOST_ROUND;
    if (hipHostMalloc(&h->p, cap, hipHostMallocDefault) == hipSuccess) {
        h->pinned = 1;
    } else {
        (void)hipGetLastError();
        h->p = malloc(cap);
        if (!h->p)
            return NULL;
    }
    h->cap = cap;
    h->job = amk__rw.jobs;
    return h->p;
}

/* Host buffer `kind` number b with room for `bytes`; NULL when out of memory. */
static void *host_get(int kind, int b, size_t bytes)
{
    return host_ensure(&amk__rw.host[kind][b], bytes);
}

static void pristine_drop(amk__ref_entry *e);

static void ref_release(amk__ref_entry *e)
{
    pristine_drop(e);
    for (int b = 0; b < AMK__RUN_MAX_BUFS; b++) {
        host_release(&e->in[b]);
        host_release(&e->want[b]);
    }
    e->valid = 0;
    e->hash = 0;
    e->job = 0;
}

/* Past HOST_KEEP_MAX, every buffer and cache entry the last job did not use goes. */
void amk__rw_host_trim(void)
{
    size_t kept = 0;
    for (int k = 0; k < HOST_KINDS; k++)
        for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
            kept += amk__rw.host[k][b].cap;
    for (int i = 0; i < REF_SLOTS; i++)
        for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
            kept += amk__rw.refs[i].in[b].cap + amk__rw.refs[i].want[b].cap;
    if (kept <= HOST_KEEP_MAX)
        return;
    for (int k = 0; k < HOST_KINDS; k++)
        for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
            if (amk__rw.host[k][b].job != amk__rw.jobs)
                host_release(&amk__rw.host[k][b]);
    for (int i = 0; i < REF_SLOTS; i++)
        if (amk__rw.refs[i].job != amk__rw.jobs)
            ref_release(&amk__rw.refs[i]);
}

static amk__ref_entry *ref_lookup(const amk__run_job *j, int ci, int *hit)
{
    amk__ref_key key;
    uint64_t h = amk__ref_key_make(j, ci, &key);
    amk__ref_entry *pick = NULL;
    for (int i = 0; i < REF_SLOTS; i++) {
        amk__ref_entry *e = &amk__rw.refs[i];
        if (e->valid && e->hash == h && memcmp(&e->key, &key, sizeof key) == 0) {
            e->job = amk__rw.jobs;
            *hit = 1;
            return e;
        }
        if (e->job != amk__rw.jobs &&
            (!pick || (pick->valid && (!e->valid || e->job < pick->job))))
            pick = e;
    }
    /* REF_SLOTS > AMK__RUN_MAX_CASES: some entry is not the current job's. */
    pristine_drop(pick);
    pick->valid = 0;
    pick->hash = h;
    pick->key = key;
    pick->job = amk__rw.jobs;
    *hit = 0;
    return pick;
}

int amk__rw_cached_inputs(const amk__run_job *j, int ci, void **in)
{
    /* The inputs are what the key's seed, stream and buffers say; its reference part (a
     * re-measure has none) does not enter them. */
    amk__ref_key key;
    (void)amk__ref_key_make(j, ci, &key);
    const amk__run_case *c = &j->cases[ci];
    for (int i = 0; i < REF_SLOTS; i++) {
        amk__ref_entry *e = &amk__rw.refs[i];
        if (!e->valid || e->key.seed != key.seed || e->key.stream != key.stream ||
            e->key.nbufs != key.nbufs ||
            memcmp(e->key.bufs, key.bufs, (size_t)key.nbufs * sizeof key.bufs[0]) != 0)
            continue;
        e->job = amk__rw.jobs; /* in use: not taken for another case of this job */
        for (int b = 0; b < c->nbufs; b++)
            in[b] = !amk__role_has_input(c->bufs[b].role) ? NULL : e->in[b].p;
        return 1;
    }
    return 0;
}

/* ---------- device buffers (amk__dev_set: runtime_int.h) -------------------------------- */

static void set_args(amk__dev_set *s, int which, const amk__run_kernel *k)
{
    for (int i = 0; i < k->nargs; i++) {
        if (k->args[i].buf >= 0) {
            s->argv[which][i] = &s->ptr[k->args[i].buf];
        } else if (k->args[i].buf < -1) {
            s->argv[which][i] = s->tmap[AMK__RUN_ARG_TMAP_INDEX(k->args[i].buf)];
        } else {
            s->ival[which][i] = k->args[i].bytes ? k->args[i].bits
                                                 : (uint64_t)(uint32_t)k->args[i].value;
            s->argv[which][i] = &s->ival[which][i];
        }
    }
}

/* Encodes case c's tensor maps over set s's buffers (each set has its own addresses). A
 * refused encoding is the config's run error, with the driver's reason. */
static int encode_maps(const amk__run_case *c, amk__dev_set *s, amk__run_ctx *x)
{
    for (int m = 0; m < c->nmaps; m++) {
        const amk__run_tmap *t = &c->maps[m];
        uint64_t dims[AMK_TMAP_MAX_RANK], strides[AMK_TMAP_MAX_RANK - 1];
        uint32_t box[AMK_TMAP_MAX_RANK];
        char err[256];
        for (int i = 0; i < t->rank; i++) {
            dims[i] = (uint64_t)t->dims[i];
            box[i] = (uint32_t)t->box[i];
            if (i + 1 < t->rank)
                strides[i] = (uint64_t)t->strides[i];
        }
        if (amk__gpu_tensor_map_encode(s->tmap[m], amk__dtype_name(t->dtype), t->rank,
                                       s->ptr[t->buf], dims, strides, box, t->swizzle,
                                       t->l2_promotion, err, sizeof err) != 0) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: tensor map '%s' (buffer %s): %s", c->label,
                         t->name, c->bufs[t->buf].name, err);
            return 0;
        }
    }
    return 1;
}

static void free_set(amk__dev_set *s, int nbufs)
{
    for (int b = 0; b < nbufs; b++)
        if (s->ptr[b]) {
            (void)hipFree(s->ptr[b]);
            s->ptr[b] = NULL;
        }
}

static size_t buf_bytes(const amk__run_buf *b)
{
    return (size_t)b->count * amk__dtype_size(b->dtype);
}

/* Allocates nbufs buffers of bytes[b] each (names[b] for the message). */
static int alloc_bytes(amk__dev_set *s, int nbufs, const size_t *bytes, const char *const *names,
                       const char *label, amk__run_ctx *x)
{
    char eb[256];
    memset(s->ptr, 0, sizeof s->ptr);
    for (int b = 0; b < nbufs; b++) {
        hipError_t e = hipMalloc(&s->ptr[b], bytes[b]);
        if (e != hipSuccess) {
            s->ptr[b] = NULL;
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: hipMalloc of buffer %s (%zu bytes): %s",
                         label, names[b], bytes[b], amk__rw_errtext(e, eb, sizeof eb));
            (void)hipGetLastError();
            free_set(s, nbufs);
            return 0;
        }
    }
    return 1;
}

static int alloc_set(amk__dev_set *s, const amk__run_case *c, amk__run_ctx *x)
{
    size_t bytes[AMK__RUN_MAX_BUFS];
    const char *names[AMK__RUN_MAX_BUFS];
    for (int b = 0; b < c->nbufs; b++) {
        bytes[b] = buf_bytes(&c->bufs[b]);
        names[b] = c->bufs[b].name;
    }
    return alloc_bytes(s, c->nbufs, bytes, names, c->label, x);
}

/* The check's device buffers, allocated once per job: buffer b is as large as the largest
 * buffer b of any case. *nbufs gets the most buffers of a case. */
static int alloc_check_set(const amk__run_job *j, amk__dev_set *s, int *nbufs, amk__run_ctx *x)
{
    size_t bytes[AMK__RUN_MAX_BUFS] = {0};
    const char *names[AMK__RUN_MAX_BUFS] = {0};
    *nbufs = 0;
    for (int ci = 0; ci < j->ncases; ci++) {
        const amk__run_case *c = &j->cases[ci];
        for (int b = 0; b < c->nbufs; b++)
            if (!names[b] || buf_bytes(&c->bufs[b]) > bytes[b]) {
                bytes[b] = buf_bytes(&c->bufs[b]);
                names[b] = c->bufs[b].name;
            }
        if (c->nbufs > *nbufs)
            *nbufs = c->nbufs;
    }
    return alloc_bytes(s, *nbufs, bytes, names, "correctness check", x);
}

/* ---------- pristine device inputs -----------------------------------------------------
 * A check uploads a case's inputs for its candidate and the benchmark uploads them again
 * (the candidate may have written them): two trips over the bus a config, ~130 ms for the
 * 3.2 GB input of Kernel Tuner's reduction example on the H100, most of a small kernel's
 * trial, though the inputs are the same for every config. Past PRISTINE_MIN bytes of inputs
 * the reference cache entry keeps them on the device too, in buffers no kernel is given, and
 * both uploads become device-to-device copies. Made only where a quarter of the free device
 * memory holds them; dropped after a config that failed its check or a run (a stray write of
 * that kernel could have reached them: the next job copies them from host again). */
#define PRISTINE_MIN ((size_t)64 << 20)

static void pristine_drop(amk__ref_entry *e)
{
    for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
        if (e->dev[b]) {
            (void)hipFree(e->dev[b]);
            e->dev[b] = NULL;
        }
}

/* Entry e's device copy of case c's inputs (NULL for outputs), or NULL when it has none. */
static void *const *pristine_of(const amk__ref_entry *e, const amk__run_case *c)
{
    int any = 0;
    for (int b = 0; b < c->nbufs; b++) {
        if (!amk__role_has_input(c->bufs[b].role))
            continue;
        if (!e->dev[b])
            return NULL;
        any = 1;
    }
    return any ? e->dev : NULL;
}

/* Makes entry e's device copy of case c's inputs (host copies in[]) where it pays and fits.
 * Returns it, or NULL (nothing kept; the uploads stay host to device). */
static void *const *pristine_make(amk__ref_entry *e, const amk__run_case *c, void *const *in)
{
    size_t total = 0, fr = 0, tot = 0;
    pristine_drop(e);
    for (int b = 0; b < c->nbufs; b++)
        if (amk__role_has_input(c->bufs[b].role))
            total += buf_bytes(&c->bufs[b]);
    if (total < PRISTINE_MIN)
        return NULL;
    if (hipMemGetInfo(&fr, &tot) != hipSuccess || total > fr / 4) {
        (void)hipGetLastError();
        return NULL;
    }
    for (int b = 0; b < c->nbufs; b++) {
        if (!amk__role_has_input(c->bufs[b].role))
            continue;
        if (hipMalloc(&e->dev[b], buf_bytes(&c->bufs[b])) != hipSuccess) {
            e->dev[b] = NULL;
            break;
        }
        if (hipMemcpyAsync(e->dev[b], in[b], buf_bytes(&c->bufs[b]), hipMemcpyHostToDevice,
                           amk__rw.stream) != hipSuccess)
            break;
    }
    if (pristine_of(e, c) && hipStreamSynchronize(amk__rw.stream) == hipSuccess)
        return e->dev;
    (void)hipGetLastError(); /* a sticky error shows again in the check's own calls */
    pristine_drop(e);
    return NULL;
}

static hipError_t launch_kernel(hipFunction_t fn, const amk__run_kernel *k, void **argv)
{
    return amk__gpu_launch(fn, &k->launch, amk__rw.stream, argv);
}

/* Launches one kernel and waits for it. On failure fills x (RUN_ERROR) and returns 0. */
static int run_once(hipFunction_t fn, const amk__run_kernel *k, void **argv, const char *what,
                    const char *label, amk__run_ctx *x)
{
    char eb[256];
    hipError_t e = launch_kernel(fn, k, argv);
    if (e == hipSuccess)
        e = hipStreamSynchronize(amk__rw.stream);
    if (e == hipSuccess)
        e = hipGetLastError();
    if (e != hipSuccess) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: %s kernel failed: %s", label, what,
                     amk__rw_errtext(e, eb, sizeof eb));
        x->recycle = amk__rw_context_broken();
        if (x->recycle)
            amk__rw_note(x, "sticky error: the run worker's GPU context is lost; worker respawned");
    }
    return e == hipSuccess;
}

#define GPU(call)                                                                                  \
    do {                                                                                           \
        hipError_t e_ = (call);                                                                    \
        if (e_ != hipSuccess) {                                                                    \
            char eb_[256];                                                                         \
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: %s: %s", c->label, #call,                   \
                         amk__rw_errtext(e_, eb_, sizeof eb_));                                    \
            x->recycle = amk__rw_context_broken();                                                 \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* Gives set s its pristine inputs (in, inout) and poisons its outputs (out) with 0xFF bytes:
 * NaN in every float type. The inputs come from host (host != NULL) or from the device
 * buffers `from` (by buffer index), which hold them untouched (device to device: no second
 * trip over the bus). Everything goes through the worker's own stream (non-blocking: it does
 * not order with the legacy default stream). */
static int upload(const amk__run_case *c, amk__dev_set *s, void *const *host,
                  void *const *from, amk__run_ctx *x)
{
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        if (!amk__role_has_input(rb->role))
            GPU(hipMemsetAsync(s->ptr[b], 0xff, buf_bytes(rb), amk__rw.stream));
        else if (host)
            GPU(hipMemcpyAsync(s->ptr[b], host[b], buf_bytes(rb), hipMemcpyHostToDevice,
                               amk__rw.stream));
        else
            GPU(hipMemcpyAsync(s->ptr[b], from[b], buf_bytes(rb),
                               hipMemcpyDeviceToDevice, amk__rw.stream));
    }
    GPU(hipStreamSynchronize(amk__rw.stream));
    return 1;
out:
    return 0;
}

static int download(const amk__run_case *c, amk__dev_set *s, void **host, amk__run_ctx *x)
{
    for (int b = 0; b < c->nbufs; b++)
        if (amk__role_is_output(c->bufs[b].role))
            GPU(hipMemcpyAsync(host[b], s->ptr[b], buf_bytes(&c->bufs[b]),
                               hipMemcpyDeviceToHost, amk__rw.stream));
    GPU(hipStreamSynchronize(amk__rw.stream));
    return 1;
out:
    return 0;
}

/* Copies case c's constant-memory inputs (host copies in[]) into the __constant__ symbols
 * of kernel k's module, found through the module's global lookup. The symbols belong to the
 * module, not to a launch or a buffer set, so this runs before the launches of each kernel
 * (Kernel Tuner's cmem_args). A too small symbol is the config's run error, and so is a
 * missing one in the candidate (`required`); an independent reference may read the data
 * through its pointer argument instead and have no such symbol. */
static int fill_constants(const amk__run_job *j, const amk__run_case *c,
                          const amk__run_kernel *k, void *const *in, int required,
                          amk__run_ctx *x)
{
    char eb[256];
    hipModule_t m = NULL;
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        if (rb->memory != AMK__MEM_CONSTANT)
            continue;
        hipError_t e = m ? hipSuccess : amk__rw_module(&j->codes[k->code], &m);
        void *sym = NULL;
        size_t have = 0;
        if (e == hipSuccess && (e = hipModuleGetGlobal(&sym, &have, m, rb->symbol)) != hipSuccess) {
            (void)hipGetLastError();
            if (!required)
                continue;
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR,
                         "%s: constant memory of buffer %s: the code object of '%s' has no "
                         "__constant__ symbol '%s': %s",
                         c->label, rb->name, k->entry, rb->symbol,
                         amk__rw_errtext(e, eb, sizeof eb));
            return 0;
        }
        if (e == hipSuccess && have < buf_bytes(rb)) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR,
                         "%s: constant memory of buffer %s: %zu bytes do not fit the "
                         "__constant__ symbol '%s' of %zu bytes",
                         c->label, rb->name, buf_bytes(rb), rb->symbol, have);
            return 0;
        }
        if (e == hipSuccess)
            e = hipMemcpyAsync(sym, in[b], buf_bytes(rb), hipMemcpyHostToDevice, amk__rw.stream);
        if (e == hipSuccess)
            e = hipStreamSynchronize(amk__rw.stream);
        if (e != hipSuccess) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: constant memory of buffer %s: %s",
                         c->label, rb->name, amk__rw_errtext(e, eb, sizeof eb));
            x->recycle = amk__rw_context_broken();
            return 0;
        }
    }
    return 1;
}

static int check_threads(const amk__run_job *j)
{
    return j->check_threads > 0 ? j->check_threads : amk__check_threads();
}

/* Host inputs of case c from the job's seed (or their data files), in the host buffers
 * hb[]; in[b] gets them (NULL for outputs). 0 with the reason in err (out of host memory, a
 * data file that cannot be read). */
int amk__rw_make_inputs(const amk__run_job *j, const amk__run_case *c, uint64_t stream0,
                        amk__host_buf *hb, void **in, char *err, size_t cap)
{
    snprintf(err, cap, "out of host memory for the inputs");
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        in[b] = NULL;
        if (!amk__role_has_input(rb->role))
            continue;
        if (!(in[b] = host_ensure(&hb[b], buf_bytes(rb))))
            return 0;
        if (rb->data[0]) {
            amk_diag dd = {0};
            if (amk_data_read(rb->data, in[b], (int64_t)buf_bytes(rb),
                              (int64_t)amk__dtype_size(rb->dtype), &dd) != AMK_OK) {
                snprintf(err, cap, "buffer %s: %s", rb->name, dd.msg);
                return 0;
            }
        } else if (rb->init == AMK__INIT_CONSTANT)
            amk__check_fill_value(in[b], rb->dtype, rb->count, rb->fill);
        else
            amk__check_fill_threads(in[b], rb->dtype, rb->count, rb->init, j->seed,
                                    stream0 + (uint64_t)b, check_threads(j));
    }
    return 1;
}

/* The external outputs of case c (got[]) into the files <j->outputs><name>, raw bytes, for
 * the judge the evaluator calls in the parent (amk_backend_opts.verify). 0 with x failed
 * (run_error) when a file cannot be written. */
static int write_outputs(const amk__run_job *j, const amk__run_case *c, void *const *got,
                         amk__run_ctx *x)
{
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        char path[AMK__RUN_PATH_MAX + AMK_NAME_MAX];
        if (!rb->external)
            continue;
        snprintf(path, sizeof path, "%s%s", j->outputs, rb->name);
        FILE *f = fopen(path, "wb");
        size_t n = buf_bytes(rb);
        int ok = f && fwrite(got[b], 1, n, f) == n;
        int err = errno;
        if (f && fclose(f) != 0 && ok) {
            ok = 0;
            err = errno;
        }
        if (!ok) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: output %s for the external check: %s: %s",
                         c->label, rb->name, path, strerror(err));
            return 0;
        }
    }
    return 1;
}

/* What comparing a case's outputs found: ok, or the failure's status and reason; a note on
 * elements the reference left unwritten. */
typedef struct case_cmp {
    int ok;
    amk_status status;
    char reason[700];
    char note[200];
} case_cmp;

static void compare_case(const amk__run_job *j, const amk__run_case *c, void *const *got,
                         void *const *want, case_cmp *out)
{
    out->ok = 1;
    out->note[0] = '\0';
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        if (!amk__role_is_output(rb->role) || rb->external)
            continue;
        amk__compare cmp;
        if (!amk__check_compare_threads(rb->dtype, got[b], want[b], rb->count, rb->reduction,
                                        c->rtol_scale, c->atol, check_threads(j), &cmp)) {
            char what[400];
            amk__compare_describe(&cmp, rb->name, what, sizeof what);
            out->ok = 0;
            out->status = cmp.kind == AMK__CMP_REF_NONFINITE || cmp.kind == AMK__CMP_REF_UNWRITTEN
                              ? AMK_STATUS_RUN_ERROR
                              : AMK_STATUS_WRONG;
            snprintf(out->reason, sizeof out->reason, "%s: %s", c->label, what);
            return;
        }
        if (cmp.skipped && c->bench)
            snprintf(out->note, sizeof out->note, "%s: %lld of %lld elements left unwritten "
                     "by the reference, not compared", rb->name, (long long)cmp.skipped,
                     (long long)rb->count);
    }
}

/* The benchmarked case's comparison, run beside the checks of the other cases and the
 * benchmark (it took 15-20 ms of host time a gemm_hopper 4096^3 config on the H100 machine,
 * the device idle meanwhile). Its outputs are in their own host buffers (HOST_BENCH_GOT);
 * the job's verdict waits for it, and a config it fails gets no latency. */
typedef struct async_cmp {
    const amk__run_job *j;
    const amk__run_case *c;
    void *got[AMK__RUN_MAX_BUFS], *want[AMK__RUN_MAX_BUFS];
    pthread_t thread;
    int started;
    case_cmp res;
} async_cmp;

static void *async_main(void *arg)
{
    async_cmp *a = arg;
    compare_case(a->j, a->c, a->got, a->want, &a->res);
    return NULL;
}

static void apply_cmp(const case_cmp *r, amk__run_ctx *x)
{
    if (!r->ok)
        amk__rw_fail(x, r->status, "%s", r->reason);
    else if (r->note[0])
        amk__rw_note(x, "%s", r->note);
}

/* Waits for a started comparison and gives the job its result: a failure uncounts the case
 * and decides the job's status (it is the earlier case); a pass adds its note when `note`.
 * 1 when it passed or none was started (again), else 0. */
static int async_finish(async_cmp *a, int note, amk__run_ctx *x)
{
    if (!a->started)
        return 1;
    (void)pthread_join(a->thread, NULL);
    a->started = 0;
    if (!a->res.ok)
        x->res->checked--;
    if (!a->res.ok || note)
        apply_cmp(&a->res, x);
    return a->res.ok;
}

/* The correctness check of case ci on the job's check set s: inputs from the seed,
 * reference into its outputs, candidate into poisoned outputs, host comparison. Inputs and
 * reference outputs come from the reference cache when it holds this case (*cached = 1),
 * else they are made and kept there. The inputs stay in `in` (the entry's buffers, which
 * the rest of this job does not reuse) for the benchmark; *used gets the cache entry (its
 * device copy of the inputs, when it has one, is the benchmark's source too). Returns 1 when
 * the candidate passed, or, with `async` given, when its comparison has started there
 * (async_join tells). */
static int check_case(const amk__run_job *j, int ci, hipFunction_t fref, hipFunction_t fcand,
                      amk__dev_set *s, void **in, int *cached, async_cmp *async,
                      amk__ref_entry **used, amk__run_ctx *x)
{
    const amk__run_case *c = &j->cases[ci];
    void *want[AMK__RUN_MAX_BUFS] = {0}, *got[AMK__RUN_MAX_BUFS] = {0};
    int hit = 0;
    amk__rw_phase("inputs");
    double t_miss = amk_now_s(); /* a miss makes the entry for later jobs too: set-up */
    amk__ref_entry *e = ref_lookup(j, ci, &hit);
    *used = e;
    *cached = 0;
    if (hit) {
        for (int b = 0; b < c->nbufs; b++)
            in[b] = !amk__role_has_input(c->bufs[b].role) ? NULL : e->in[b].p;
    } else {
        char err[600];
        if (!amk__rw_make_inputs(j, c, (uint64_t)ci * AMK__RUN_MAX_BUFS, e->in, in, err,
                                 sizeof err)) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: %s", c->label, err);
            return 0;
        }
    }
    void *const *dev = pristine_of(e, c);
    if (!dev) {
        amk__rw_phase("pristine");
        dev = pristine_make(e, c, in);
    }
    for (int b = 0; b < c->nbufs; b++)
        if (amk__role_is_output(c->bufs[b].role)) {
            /* Same key, same sizes: on a hit host_ensure keeps the cached bytes. */
            want[b] = host_ensure(&e->want[b], buf_bytes(&c->bufs[b]));
            got[b] = host_get(async ? HOST_BENCH_GOT : HOST_GOT, b, buf_bytes(&c->bufs[b]));
            if (!want[b] || !got[b])
                goto oom;
        }
    if (!encode_maps(c, s, x))
        return 0;
    set_args(s, 0, &c->ref);
    set_args(s, 1, &c->cand);

    if (!hit) {
        /* Reference on pristine inputs; its outputs leave the device before the candidate
         * runs, so nothing the candidate does can change them. The entry becomes valid only
         * once they are all on the host. */
        amk__rw_phase("upload");
        if (!upload(c, s, dev ? NULL : in, dev, x))
            return 0;
        amk__rw_stage(c->label, "reference kernel");
        amk__rw_phase("reference");
        if (!fill_constants(j, c, &c->ref, in, 0, x) ||
            !run_once(fref, &c->ref, s->argv[0], "reference", c->label, x))
            return 0;
        if (!download(c, s, want, x))
            return 0;
        /* a user-supplied answer replaces the reference's output of that buffer */
        for (int b = 0; b < c->nbufs; b++) {
            amk_diag dd = {0};
            if (c->bufs[b].answer[0] &&
                amk_data_read(c->bufs[b].answer, want[b], (int64_t)buf_bytes(&c->bufs[b]),
                              (int64_t)amk__dtype_size(c->bufs[b].dtype), &dd) != AMK_OK) {
                amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: answer of buffer %s: %s", c->label,
                             c->bufs[b].name, dd.msg);
                return 0;
            }
        }
        e->valid = 1;
        amk__rw_setup_add((amk_now_s() - t_miss) * 1e3);
    }
    *cached = hit;
    /* Candidate: every input uploaded again from host or the device copy (pristine even if
     * the reference wrote one), outputs poisoned. */
    amk__rw_phase("upload");
    if (!upload(c, s, dev ? NULL : in, dev, x))
        return 0;
    amk__rw_stage(c->label, "candidate kernel");
    amk__rw_phase("candidate");
    if (!fill_constants(j, c, &c->cand, in, 1, x) ||
        !run_once(fcand, &c->cand, s->argv[1], "candidate", c->label, x))
        return 0;
    amk__rw_phase("download");
    if (!download(c, s, got, x))
        return 0;
    if (c->bench && j->outputs[0] && !write_outputs(j, c, got, x))
        return 0;
    amk__rw_stage(c->label, "compare");
    amk__rw_phase("compare");
    if (async) {
        *async = (async_cmp){.j = j, .c = c};
        memcpy(async->got, got, sizeof got);
        memcpy(async->want, want, sizeof want);
        async->started = pthread_create(&async->thread, NULL, async_main, async) == 0;
        if (async->started)
            return 1;
    }
    case_cmp r;
    compare_case(j, c, got, want, &r);
    apply_cmp(&r, x);
    return r.ok;
oom:
    amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: out of host memory for the check buffers", c->label);
    return 0;
}

/* Times the bench case's candidate (and `other` for REMEASURE) over rotating copies of the
 * inputs. Set 0 is `first` when given (the job's check set, borrowed: large enough for every
 * case), else allocated; it gets the inputs from host (in), or from their pristine device
 * copy dev_in when given, the other sets copy them from set 0 on the device. stats gets one
 * entry per timed kernel. */
int amk__rw_bench_case(const amk__run_job *j, const amk__run_case *c, hipFunction_t *fns,
                       const amk__run_kernel *const *ks, int nk, void *const *in,
                       void *const *dev_in, const amk__dev_set *first, amk__run_ctx *x)
{
    amk__dev_set *sets = NULL;
    amk__peer peer;
    int nsets = 1, flush = 0, made = 0, ok = 0;
    void *flush_buf = NULL;
    size_t flush_bytes = 0;
    int64_t footprint = 0;
    for (int b = 0; b < c->nbufs; b++)
        footprint += (int64_t)buf_bytes(&c->bufs[b]);
    if (j->bench.cold) {
        size_t fr = 0, tot = 0;
        int64_t cap = j->bench.mem_cap;
        if (hipMemGetInfo(&fr, &tot) == hipSuccess && (int64_t)(fr / 2) < cap)
            cap = (int64_t)(fr / 2);
        nsets = amk__bench_sets(footprint, amk__rw.info.l2_bytes, cap, &flush);
    }
    amk__rw_phase("bench sets");
    sets = calloc((size_t)nsets, sizeof *sets);
    if (!sets) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: out of host memory", c->label);
        return 0;
    }
    for (made = 0; made < nsets; made++) {
        if (made == 0 && first)
            sets[0] = *first;
        else if (!alloc_set(&sets[made], c, x))
            goto out;
        if (!upload(c, &sets[made], made == 0 && !dev_in ? in : NULL,
                    made == 0 ? dev_in : sets[0].ptr, x) ||
            !encode_maps(c, &sets[made], x)) {
            made++; /* freed below (unless borrowed) */
            goto out;
        }
        for (int i = 0; i < nk; i++)
            set_args(&sets[made], i, ks[i]);
    }
    if (flush) {
        flush_bytes = (size_t)(amk__rw.info.l2_bytes > 0 ? amk__rw.info.l2_bytes : 64 << 20) * 2;
        if (hipMalloc(&flush_buf, flush_bytes) != hipSuccess) {
            (void)hipGetLastError();
            flush_buf = NULL;
            amk__rw_note(x, "no memory for an L2 flush buffer");
        }
    }
    for (int i = 0; i < nk; i++)
        if (!fill_constants(j, c, ks[i], in, 1, x))
            goto out;
    amk__bench_kernel bk[2];
    memset(bk, 0, sizeof bk);
    for (int i = 0; i < nk; i++) {
        bk[i].fn = fns[i];
        bk[i].launch = ks[i]->launch;
        for (int s = 0; s < nsets; s++)
            bk[i].argv[s] = sets[s].argv[i];
    }
    /* The spec's peer, timed interleaved with the candidate (EVAL only: nk = 1). */
    int timed = nk;
    if (nk == 1 && c->peer.op != AMK__PEER_NONE) {
        amk__rw_phase("peer setup");
        if (amk__peer_prepare(&peer, c, amk__rw.stream, x->res->peer, sizeof x->res->peer,
                              x->res->peer_why, sizeof x->res->peer_why)) {
            for (int s = 0; s < nsets; s++) {
                peer.ptr[s][0] = sets[s].ptr[c->peer.a];
                peer.ptr[s][1] = c->peer.b >= 0 ? sets[s].ptr[c->peer.b] : NULL;
                peer.ptr[s][2] = sets[s].ptr[c->peer.c];
            }
            bk[1].run = amk__peer_run;
            bk[1].ctx = &peer;
            timed = 2;
        } else {
            amk__rw_note(x, "peer not available: %s", x->res->peer_why);
        }
    }
    char msg[300], why[200];
    if (!amk__obs_open(amk__rw.device, why, sizeof why))
        amk__rw_note(x, "device not observed: %s", why);
    amk__rw_stage(c->label, "benchmark");
    amk__bench_stats st2[2];
    hipError_t e = amk__bench_run(amk__rw.stream, bk, timed, nsets, flush_buf, flush_bytes,
                                  &j->bench, st2, msg, sizeof msg);
    if (e != hipSuccess && timed > nk && !amk__rw_context_broken()) {
        /* The peer failed, not necessarily the candidate: time the candidate alone. */
        amk__rw_note(x, "peer not timed: %s", msg);
        timed = nk;
        e = amk__bench_run(amk__rw.stream, bk, nk, nsets, flush_buf, flush_bytes, &j->bench, st2,
                           msg, sizeof msg);
    }
    for (int i = 0; i < nk && e == hipSuccess; i++)
        x->res->stats[i] = st2[i];
    if (e == hipSuccess && timed > nk) {
        x->res->peer_timed = 1;
        x->res->peer_stats = st2[1];
        double ci = (st2[1].ci_hi_us - st2[1].ci_lo_us) / 2 / st2[1].median_us;
        char ci_text[48] = ""; /* the CI of the reps the candidate's stopping rule gave it */
        if (isfinite(ci))
            snprintf(ci_text, sizeof ci_text, "; 95%% CI +-%.2f%%", 100 * ci);
        amk__rw_note(x, "peer %s: %.2f us (same loop, interleaved%s)", x->res->peer,
                     st2[1].median_us, ci_text);
    }
    if (e != hipSuccess) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: benchmark: %s", c->label, msg);
        x->recycle = amk__rw_context_broken();
        goto out;
    }
    x->res->nstats = nk;
    int cold = j->bench.cold && (nsets > 1 || flush_buf) && !(flush && !flush_buf);
    snprintf(x->res->regime, sizeof x->res->regime, "%s", cold ? "cold_l2" : "warm_l2");
    char how[64];
    if (flush_buf)
        snprintf(how, sizeof how, " + L2 flush (%.0f us a launch, untimed)",
                 x->res->stats[0].flush_us);
    else
        snprintf(how, sizeof how, "%s", nsets > 1 ? " rotated" : "");
    amk__rw_note(x, "%s: %d reps, %d input set%s of %.1f MiB%s", x->res->regime,
                 x->res->stats[0].reps, nsets, nsets == 1 ? "" : "s", footprint / 1048576.0, how);
    char stopped[128];
    amk__bench_stop_note(&x->res->stats[0], &j->bench, stopped, sizeof stopped);
    amk__rw_note(x, "%s", stopped);
    const amk__bench_stats *st = &x->res->stats[0];
    if (j->bench.energy_window_s > 0 && st->energy_ticks > 0)
        amk__rw_note(x, "energy: %.6g uJ/launch over %d counter ticks in %.0f ms, %.0f "
                     "launches (+-%.1f%%)%s", st->energy_uj, st->energy_ticks,
                     st->energy_window_ms, st->energy_launches,
                     100 * amk_energy_noise(st->energy_ticks),
                     flush_buf ? ", L2 flush included" : "");
    else if (j->bench.energy_window_s > 0)
        amk__rw_note(x, "energy not measured: %s", st->energy_why);
    if (st->regime == AMK__REGIME_SUSTAINED && st->loaded_before_s >= j->bench.sustain_s)
        amk__rw_note(x, "sustained: device loaded %.1f s already, warmed up in %.0f ms",
                     st->loaded_before_s, st->settle_ms);
    else if (st->regime == AMK__REGIME_SUSTAINED)
        amk__rw_note(x, "sustained: settled in %.0f ms", st->settle_ms);
    else
        amk__rw_note(x, "burst: %.0f ms idle before each chunk", j->bench.burst_gap_s * 1e3);
    if (st->regime == AMK__REGIME_SUSTAINED && x->res->peer_timed) {
        /* Until the next job comes, the peer keeps the device in this workload's state. */
        int idx[3] = {c->peer.a, c->peer.b, c->peer.c};
        size_t bytes[3];
        for (int i = 0; i < 3; i++)
            bytes[i] = idx[i] >= 0 ? buf_bytes(&c->bufs[idx[i]]) : 0;
        amk__rw_phase("keeper arm");
        amk__keep_arm(&peer, bytes, x->res->peer_stats.median_us);
    } else if (st->regime != AMK__REGIME_SUSTAINED) {
        amk__keep_disarm();
    }
    ok = 1;
out:
    amk__rw_phase("bench free");
    if (flush_buf)
        (void)hipFree(flush_buf);
    for (int s = first ? 1 : 0; s < made; s++)
        free_set(&sets[s], c->nbufs);
    free(sets);
    return ok;
}

/* EVAL: every case checked on one set of device buffers, then the bench case timed (its
 * check set becomes the benchmark's set 0). */
void amk__rw_eval_job(const amk__run_job *j, const hipFunction_t *fref, const hipFunction_t *fcand,
                      int bench_ci, amk__run_ctx *x)
{
    amk__run_result *r = x->res;
    void *ins[AMK__RUN_MAX_CASES][AMK__RUN_MAX_BUFS];
    amk__ref_entry *used[AMK__RUN_MAX_CASES] = {0};
    amk__dev_set s;
    int nbufs = 0, cached = 0, hits = 0, tried = 0;
    async_cmp bench_cmp = {0};
    size_t notes_before = 0;
    double t0 = amk_now_s(), t1 = t0; /* where a job's time goes, for the row's note */
    amk__rw_phase("check set");
    if (!alloc_check_set(j, &s, &nbufs, x))
        return;
    for (int ci = 0; ci < j->ncases; ci++) {
        int ok = check_case(j, ci, fref[ci], fcand[ci], &s, ins[ci], &cached,
                            ci == bench_ci ? &bench_cmp : NULL, &used[ci], x);
        hits += cached;
        tried++;
        if (!ok)
            goto out;
        r->checked++;
    }
    if (bench_ci < 0) {
        r->status = AMK_STATUS_OK;
        amk__rw_note(x, "checked only (no benchmarked shape)");
        goto out;
    }
    const amk__run_case *bc = &j->cases[bench_ci];
    hipFunction_t fns[1] = {fcand[bench_ci]};
    const amk__run_kernel *ks[1] = {&bc->cand};
    t1 = amk_now_s();
    notes_before = strnlen(r->notes, sizeof r->notes);
    int timed = amk__rw_bench_case(j, bc, fns, ks, 1, ins[bench_ci],
                                   used[bench_ci] ? pristine_of(used[bench_ci], bc) : NULL, &s, x);
    amk__rw_phase("compare wait");
    if (!async_finish(&bench_cmp, 1, x)) {
        r->notes[notes_before] = '\0'; /* nothing of a timing the check voids */
        goto out;
    }
    if (timed) {
        r->status = AMK_STATUS_OK;
        amk__rw_note(x, "run worker: checks %.0f ms, benchmark %.0f ms", (t1 - t0) * 1e3,
                     (amk_now_s() - t1) * 1e3);
    }
out:
    (void)async_finish(&bench_cmp, 0, x); /* when a later case failed first */
    if (hits && hits == tried)
        amk__rw_note(x, "reference cached");
    else if (hits)
        amk__rw_note(x, "reference cached for %d of %d shapes", hits, tried);
    int copies = 0;
    for (int ci = 0; ci < tried; ci++)
        copies += used[ci] && pristine_of(used[ci], &j->cases[ci]);
    if (copies)
        amk__rw_note(x, "inputs from their device copy");
    if (r->status == AMK_STATUS_WRONG || r->status == AMK_STATUS_RUN_ERROR)
        for (int ci = 0; ci < tried; ci++) /* see "pristine device inputs" */
            if (used[ci])
                pristine_drop(used[ci]);
    free_set(&s, nbufs);
}
