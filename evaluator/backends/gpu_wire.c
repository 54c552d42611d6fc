/* The run worker's wire format (host only; no GPU call): a run job and a device query as
 * bytes for the pipe between the parent and a run worker (encode, and decode with every count
 * and index validated), and the reference-cache key of a case. Built with the GPU layer. */
#include "gpu_wire.h"
#include "service/worker_int.h"

#include <stdlib.h>
#include <string.h>

#define RUN_MAGIC UINT32_C(0x414d4b52) /* "AMKR" */

/* ---------- wire format ----------------------------------------------------------------
 * Parent and run worker are the same binary (fork, no exec), so the fixed-size structs
 * travel as bytes: [magic u32][op u32][struct][code images...]. Pointers are re-set and
 * every count and index is validated on decode. */

typedef struct wire_head {
    uint32_t magic, op;
    uint64_t struct_size;
} wire_head;

int amk__run_job_encode(const amk__run_job *j, void **out, size_t *len)
{
    size_t total = sizeof(wire_head) + sizeof *j;
    if (j->ncodes < 0 || j->ncodes > AMK__RUN_MAX_CODES)
        return AMK_EINVAL;
    for (int i = 0; i < j->ncodes; i++) {
        if (j->codes[i].size > AMK_WORKER_MSG_MAX)
            return AMK_EINVAL;
        total += j->codes[i].size;
    }
    if (total > AMK_WORKER_MSG_MAX)
        return AMK_EINVAL;
    unsigned char *p = malloc(total);
    if (!p)
        return AMK_ENOMEM;
    wire_head h = {RUN_MAGIC, (uint32_t)j->op, sizeof *j};
    memcpy(p, &h, sizeof h);
    amk__run_job copy = *j;
    for (int i = 0; i < copy.ncodes; i++)
        copy.codes[i].image = NULL;
    memcpy(p + sizeof h, &copy, sizeof copy);
    size_t off = sizeof h + sizeof copy;
    for (int i = 0; i < j->ncodes; i++) {
        memcpy(p + off, j->codes[i].image, j->codes[i].size);
        off += j->codes[i].size;
    }
    *out = p;
    *len = total;
    return AMK_OK;
}

int amk__run_query_encode(int device, void **out, size_t *len)
{
    amk__run_job *j = calloc(1, sizeof *j);
    if (!j)
        return AMK_ENOMEM;
    j->op = AMK__RUN_OP_QUERY;
    j->device = device;
    int rc = amk__run_job_encode(j, out, len);
    free(j);
    return rc;
}

static int kernel_ok(const amk__run_kernel *k, int ncodes, int nbufs, int nmaps, int need)
{
    if (k->code < 0)
        return !need;
    if (k->code >= ncodes || k->nargs < 0 || k->nargs > AMK__RUN_MAX_ARGS ||
        memchr(k->entry, '\0', sizeof k->entry) == NULL || !k->entry[0])
        return 0;
    for (int i = 0; i < k->nargs; i++) {
        const amk__run_arg *a = &k->args[i];
        if (a->buf >= nbufs || a->buf < AMK__RUN_ARG_TMAP(nmaps - 1))
            return 0;
        if (a->buf == -1 && a->bytes != 0 && a->bytes != 4 && a->bytes != 8)
            return 0;
    }
    return 1;
}

static int tmap_ok(const amk__run_tmap *m, int nbufs)
{
    if (m->rank < 1 || m->rank > AMK_TMAP_MAX_RANK || m->buf < 0 || m->buf >= nbufs ||
        m->dtype < 0 || m->dtype >= AMK__DT_COUNT || memchr(m->name, '\0', sizeof m->name) == NULL)
        return 0;
    for (int i = 0; i < m->rank; i++)
        if (m->dims[i] < 1 || m->box[i] < 1 || (i + 1 < m->rank && m->strides[i] < 1))
            return 0;
    return 1;
}

int amk__run_job_decode(const void *buf, size_t len, amk__run_job *j)
{
    const unsigned char *p = buf;
    wire_head h;
    if (len < sizeof h + sizeof *j)
        return AMK_EPARSE;
    memcpy(&h, p, sizeof h);
    if (h.magic != RUN_MAGIC || h.struct_size != sizeof *j)
        return AMK_EPARSE;
    memcpy(j, p + sizeof h, sizeof *j);
    if ((uint32_t)j->op != h.op || j->ncodes < 0 || j->ncodes > AMK__RUN_MAX_CODES ||
        j->ncases < 0 || j->ncases > AMK__RUN_MAX_CASES ||
        memchr(j->outputs, '\0', sizeof j->outputs) == NULL)
        return AMK_EPARSE;
    size_t off = sizeof h + sizeof *j;
    for (int i = 0; i < j->ncodes; i++) {
        if (j->codes[i].size > len - off)
            return AMK_EPARSE;
        j->codes[i].image = p + off;
        off += j->codes[i].size;
    }
    if (off != len)
        return AMK_EPARSE;
    for (int c = 0; c < j->ncases; c++) {
        amk__run_case *k = &j->cases[c];
        if (k->nbufs < 1 || k->nbufs > AMK__RUN_MAX_BUFS ||
            memchr(k->label, '\0', sizeof k->label) == NULL)
            return AMK_EPARSE;
        for (int b = 0; b < k->nbufs; b++) {
            const amk__run_buf *rb = &k->bufs[b];
            if (rb->dtype < 0 || rb->dtype >= AMK__DT_COUNT || rb->count < 1 ||
                rb->role < AMK__ROLE_IN || rb->role > AMK__ROLE_SCRATCH ||
                memchr(rb->name, '\0', sizeof rb->name) == NULL ||
                memchr(rb->symbol, '\0', sizeof rb->symbol) == NULL ||
                memchr(rb->data, '\0', sizeof rb->data) == NULL ||
                memchr(rb->answer, '\0', sizeof rb->answer) == NULL ||
                (rb->data[0] && !amk__role_has_input(rb->role)) ||
                (rb->answer[0] && !amk__role_is_output(rb->role)) ||
                (rb->external && (!amk__role_is_output(rb->role) || rb->answer[0])) ||
                (rb->memory != AMK__MEM_GLOBAL && rb->memory != AMK__MEM_CONSTANT) ||
                (rb->memory == AMK__MEM_CONSTANT && (rb->role != AMK__ROLE_IN || !rb->symbol[0])))
                return AMK_EPARSE;
        }
        if (k->nmaps < 0 || k->nmaps > AMK__RUN_MAX_TMAPS)
            return AMK_EPARSE;
        for (int m = 0; m < k->nmaps; m++)
            if (!tmap_ok(&k->maps[m], k->nbufs))
                return AMK_EPARSE;
        const amk__run_peer *pe = &k->peer;
        if (pe->op != AMK__PEER_NONE &&
            (pe->op > AMK__PEER_COPY || pe->a < 0 || pe->a >= k->nbufs || pe->c < 0 ||
             pe->c >= k->nbufs || pe->b >= k->nbufs ||
             (pe->op == AMK__PEER_GEMM && (pe->b < 0 || pe->m < 1 || pe->n < 1 || pe->k < 1))))
            return AMK_EPARSE;
        if (!kernel_ok(&k->cand, j->ncodes, k->nbufs, k->nmaps, 1) ||
            !kernel_ok(&k->ref, j->ncodes, k->nbufs, k->nmaps, j->op == AMK__RUN_OP_EVAL))
            return AMK_EPARSE;
    }
    if (j->op == AMK__RUN_OP_REMEASURE &&
        (j->ncases < 1 ||
         !kernel_ok(&j->other, j->ncodes, j->cases[0].nbufs, j->cases[0].nmaps, 1)))
        return AMK_EPARSE;
    return AMK_OK;
}


uint64_t amk__ref_key_make(const amk__run_job *j, int ci, amk__ref_key *key)
{
    const amk__run_case *c = &j->cases[ci];
    const amk__run_kernel *r = &c->ref;
    memset(key, 0, sizeof *key);
    key->seed = j->seed;
    key->stream = (uint64_t)ci * AMK__RUN_MAX_BUFS;
    if (r->code >= 0 && r->code < j->ncodes) {
        key->code_hash = j->codes[r->code].hash;
        key->code_size = j->codes[r->code].size;
    }
    snprintf(key->entry, sizeof key->entry, "%s", r->entry);
    for (int i = 0; i < 3; i++) {
        key->grid[i] = r->launch.grid[i];
        key->block[i] = r->launch.block[i];
        key->cluster[i] = r->launch.cluster[i];
    }
    key->shared_bytes = r->launch.shared_bytes;
    key->nargs = r->nargs;
    for (int i = 0; i < r->nargs && i < AMK__RUN_MAX_ARGS; i++) {
        key->args[i].buf = r->args[i].buf;
        key->args[i].value = r->args[i].buf == -1 ? r->args[i].value : 0;
        key->args[i].bits = r->args[i].buf == -1 ? r->args[i].bits : 0;
        key->args[i].bytes = r->args[i].buf == -1 ? r->args[i].bytes : 0;
        int m = AMK__RUN_ARG_TMAP_INDEX(r->args[i].buf);
        if (m >= 0 && m < c->nmaps && m < AMK__RUN_MAX_TMAPS) {
            const amk__run_tmap *t = &c->maps[m];
            amk__run_tmap *k = &key->maps[m];
            snprintf(k->name, sizeof k->name, "%s", t->name);
            for (int d = 0; d < AMK_TMAP_MAX_RANK; d++) {
                k->dims[d] = d < t->rank ? t->dims[d] : 0;
                k->box[d] = d < t->rank ? t->box[d] : 0;
                if (d + 1 < AMK_TMAP_MAX_RANK)
                    k->strides[d] = d + 1 < t->rank ? t->strides[d] : 0;
            }
            k->buf = t->buf;
            k->dtype = t->dtype;
            k->rank = t->rank;
            k->swizzle = t->swizzle;
            k->l2_promotion = t->l2_promotion;
            k->oob = t->oob;
        }
    }
    key->nbufs = c->nbufs;
    for (int b = 0; b < c->nbufs && b < AMK__RUN_MAX_BUFS; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        key->bufs[b].count = rb->count;
        snprintf(key->bufs[b].name, sizeof key->bufs[b].name, "%s", rb->name);
        key->bufs[b].dtype = rb->dtype;
        key->bufs[b].role = rb->role;
        key->bufs[b].init = rb->init;
        key->bufs[b].memory = rb->memory;
        key->bufs[b].fill = rb->init == AMK__INIT_CONSTANT ? rb->fill : 0;
        snprintf(key->bufs[b].symbol, sizeof key->bufs[b].symbol, "%s", rb->symbol);
        key->bufs[b].data = rb->data[0] ? amk_hash64(rb->data, strlen(rb->data)) : 0;
        key->bufs[b].answer = rb->answer[0] ? amk_hash64(rb->answer, strlen(rb->answer)) : 0;
    }
    return amk_hash64(key, sizeof *key);
}

/* The cache entry of case ci: a valid entry with an equal key (*hit = 1); else the entry to
 * refill (*hit = 0): an empty one, else the one used longest ago, never one the current
 * job uses; it is keyed now but stays invalid until the reference outputs are in. */
