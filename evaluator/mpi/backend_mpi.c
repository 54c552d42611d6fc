/* The `mpi` backend (rank 0; the worker ranks' serve loop is mpi_serve.c). Rank 0 splits
 * each batch into chunks over the live worker ranks in proportion to their parallelism,
 * sends choice indices, and gathers verdicts as plain bytes (one binary on every rank). Every
 * wait polls (MPI_Iprobe + a short sleep): a blocking receive would spin a core, and rank 0
 * must notice a missed deadline. A chunk that misses its deadline marks its rank dead and
 * goes back to the queue; a late reply carries an old sequence number and is dropped. */
#include "mpi_int.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HELLO_MIN_WAIT_S 30.0   /* startup: a rank that has not answered by then is excluded */
#define BYE_WAIT_S 10.0         /* at the end: live ranks acknowledge stop within this */
#define BYE_GRACE_DEAD_S 2.0    /* ... ranks marked dead get this long */

static void append_note(amk_verdict *v, const char *text)
{
    size_t n = strnlen(v->notes, sizeof v->notes);
    if (n < sizeof v->notes - 1)
        snprintf(v->notes + n, sizeof v->notes - n, "%s%s", n ? "; " : "", text);
}

/* ---------- rank 0: the mpi backend ------------------------------------------------------- */

typedef struct peer {
    int rank;
    int live;            /* handshake passed and no deadline missed */
    int answered;        /* sent its hello */
    int par;             /* parallelism it reported */
    double slot_s;
    int dead;            /* marked dead: a missed deadline or a failed send */
    int stopped;         /* stop was sent */
    int bye;             /* its goodbye arrived */
    int keep_buf;        /* buf belongs to a request that never completed: never freed */
    int busy;            /* a chunk is out */
    uint64_t seq;        /* of the chunk out */
    double sent_at, deadline;
    size_t *items;       /* batch indices of the chunk out */
    size_t n_items;
    unsigned char *buf;  /* send buffer of the chunk out (alive until the send completes) */
    MPI_Request req;
} peer;

typedef struct mpi_state {
    peer *peers;         /* ranks 1 .. size-1 at index rank-1 */
    int n_peers, n_live;
    char device[64];
    amk_target target;
    int par_total;
    double rank_timeout_s;
    uint64_t next_seq;
    /* for the local fallback: the command line's backend */
    char *backend;
    amk_backend_opts opts;
    char *opt_target, *opt_sim_path, *opt_cache_dir, *opt_sim_objective;
    int *opt_devices;
    const amk_spec *kernel;
    amk_shape shape;
    amk_evaluator *local;
    amk_space *local_sp;
    /* rank 0's own time, for the scale-out evidence */
    uint64_t batches, configs;
    double t_last_return, t_loop, t_msg, t_eval;
    unsigned char *rbuf;
    size_t rcap;
    double incumbent_us; /* set_incumbent's, sent with every chunk */
} mpi_state;

static const amk_mpi_opts *creating; /* handed from amk_mpi_evaluator_create to mpi_init */

static int dup_text(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : -1;
}

static int copy_opts(mpi_state *s, const amk_mpi_opts *o)
{
    if (o->backend_opts)
        s->opts = *o->backend_opts;
    if (dup_text(&s->backend, o->backend) || dup_text(&s->opt_target, s->opts.target) ||
        dup_text(&s->opt_sim_path, s->opts.sim_path) ||
        dup_text(&s->opt_sim_objective, s->opts.sim_objective) ||
        dup_text(&s->opt_cache_dir, s->opts.cache_dir))
        return -1;
    s->opts.target = s->opt_target;
    s->opts.sim_path = s->opt_sim_path;
    s->opts.sim_objective = s->opt_sim_objective;
    s->opts.cache_dir = s->opt_cache_dir;
    if (s->opts.devices && s->opts.ndevices > 0) {
        s->opt_devices = malloc((size_t)s->opts.ndevices * sizeof *s->opt_devices);
        if (!s->opt_devices)
            return -1;
        memcpy(s->opt_devices, s->opts.devices, (size_t)s->opts.ndevices * sizeof(int));
        s->opts.devices = s->opt_devices;
    }
    s->kernel = o->kernel;
    s->shape = *o->shape;
    s->rank_timeout_s = o->rank_timeout_s;
    return 0;
}

/* Creates rank 0's own evaluator of the command line's backend (no worker can take the
 * work). Returns AMK_OK or the creation error. */
static int ensure_local(mpi_state *s, amk_diag *d)
{
    if (s->local)
        return AMK_OK;
    int rc = amk_evaluator_create(s->backend, &s->opts, s->kernel, &s->shape, &s->local, d);
    if (rc == AMK_OK)
        rc = amk_space_create(s->kernel, &s->shape, &amk_evaluator_target(s->local)->limits,
                              &s->local_sp, d);
    if (rc != AMK_OK) {
        amk_evaluator_free(s->local);
        s->local = NULL;
    }
    return rc;
}

static void mark_dead(mpi_state *s, peer *p, const char *why)
{
    if (!p->live)
        return;
    p->live = 0;
    p->dead = 1;
    s->n_live--;
    s->par_total -= p->par;
    amk_log(AMK_LOG_WARN, "mpi: rank %d %s; marked dead%s", p->rank, why,
            s->n_live ? ", its configs go to the other ranks"
                      : "; no worker rank is left");
}

/* Receives and discards the message st describes. */
static void drop_message(const MPI_Status *st)
{
    int count = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    unsigned char *junk = malloc(count > 0 ? (size_t)count : 1);
    MPI_Recv(junk, junk ? count : 0, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, amk__mpi_comm,
             MPI_STATUS_IGNORE);
    free(junk);
}

/* Handshake: every worker's hello, or HELLO_MIN_WAIT_S (or the rank timeout, if longer). */
static void handshake(mpi_state *s, uint64_t fp)
{
    double wait = s->rank_timeout_s > HELLO_MIN_WAIT_S ? s->rank_timeout_s : HELLO_MIN_WAIT_S;
    double end = amk_now_s() + wait;
    int answered = 0;
    long us = POLL_MIN_US;
    amk__mpi_hello *hs = calloc((size_t)s->n_peers, sizeof *hs);
    if (!hs) {
        amk_log(AMK_LOG_WARN, "mpi: out of memory during the handshake; no worker is used");
        return;
    }
    while (answered < s->n_peers && amk_now_s() < end) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_HELLO, amk__mpi_comm, &flag, &st) != MPI_SUCCESS ||
            !flag) {
            amk__mpi_sleep_us(us);
            if (us < POLL_MAX_ROOT_US)
                us *= 2;
            continue;
        }
        us = POLL_MIN_US;
        int r = st.MPI_SOURCE, count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        amk__mpi_hello h;
        memset(&h, 0, sizeof h);
        if (count == (int)sizeof h) {
            MPI_Recv(&h, count, MPI_BYTE, r, TAG_HELLO, amk__mpi_comm, MPI_STATUS_IGNORE);
        } else { /* another binary: drop the message, exclude the rank */
            drop_message(&st);
            snprintf(h.error, sizeof h.error, "its hello has %d bytes, not %zu: another amk "
                     "binary", count, sizeof h);
        }
        if (r < 1 || r > s->n_peers || s->peers[r - 1].answered)
            continue;
        h.device[sizeof h.device - 1] = h.error[sizeof h.error - 1] = '\0';
        h.backend[sizeof h.backend - 1] = '\0';
        hs[r - 1] = h;
        s->peers[r - 1].answered = 1;
        answered++;
    }
    /* In rank order, so "the first worker" does not depend on arrival order. */
    for (int i = 0; i < s->n_peers; i++) {
        peer *p = &s->peers[i];
        const amk__mpi_hello *h = &hs[i];
        if (!p->answered) {
            amk_log(AMK_LOG_WARN, "mpi: rank %d did not answer the handshake within %.0f s; "
                    "excluded", p->rank, wait);
            continue;
        }
        if (!h->ok) {
            amk_log(AMK_LOG_WARN, "mpi: rank %d cannot evaluate: %s; excluded", p->rank,
                    h->error);
            continue;
        }
        if (h->fingerprint != fp) {
            amk_log(AMK_LOG_WARN, "mpi: rank %d built another kernel spec or shape than rank "
                    "0 (another --spec-dir or amk version?); excluded", p->rank);
            continue;
        }
        if (s->n_live == 0) {
            snprintf(s->device, sizeof s->device, "%s", h->device);
            s->target = h->target;
        } else if (strcmp(h->device, s->device) != 0) {
            amk_log(AMK_LOG_WARN, "mpi: rank %d evaluates on '%s', not on '%s' like the first "
                    "worker; excluded (one run tunes one device model)", p->rank, h->device,
                    s->device);
            continue;
        }
        p->live = 1;
        p->par = h->parallelism > 0 ? h->parallelism : 1;
        p->slot_s = h->slot_s > 0 ? h->slot_s : 1;
        s->n_live++;
        s->par_total += p->par;
    }
    free(hs);
}

static void send_stop(peer *p)
{
    MPI_Request req;
    if (p->stopped)
        return;
    p->stopped = 1;
    if (MPI_Isend(NULL, 0, MPI_BYTE, p->rank, TAG_STOP, amk__mpi_comm, &req) == MPI_SUCCESS)
        MPI_Request_free(&req); /* zero bytes: nothing to keep alive */
}

static void mpi_clear(void *state);

static int mpi_init(void *state, const amk_backend_opts *unused, amk_diag *d)
{
    (void)unused;
    mpi_state *s = state;
    const amk_mpi_opts *o = creating;
    if (!o || !o->backend || !o->kernel || !o->shape)
        return amk_diag_set(d, AMK_EINVAL, "mpi backend: create it with "
                                           "amk_mpi_evaluator_create");
    if (!amk__mpi_started || amk__mpi_rank != 0)
        return amk_diag_set(d, AMK_EINVAL, "mpi backend: rank 0 of an MPI job only");
    if (copy_opts(s, o) != 0)
        goto oom;
    if (amk__mpi_size > 1) {
        s->peers = calloc((size_t)amk__mpi_size - 1, sizeof *s->peers);
        if (!s->peers)
            goto oom;
        s->n_peers = amk__mpi_size - 1;
    }
    for (int i = 0; i < s->n_peers; i++) {
        s->peers[i].rank = i + 1;
        s->peers[i].req = MPI_REQUEST_NULL;
    }
    handshake(s, amk__mpi_space_fingerprint(o->kernel, o->shape));
    for (int i = 0; i < s->n_peers; i++)
        if (!s->peers[i].live && s->peers[i].answered)
            send_stop(&s->peers[i]); /* excluded: let it finalise */
    if (s->n_live == 0) {
        int rc = ensure_local(s, d);
        if (rc != AMK_OK) {
            amk_diag_prefix(d, "mpi: no worker rank is usable and rank 0 cannot evaluate "
                               "itself");
            mpi_clear(s); /* clear is not called after a failed init: stop the workers */
            return rc;
        }
        snprintf(s->device, sizeof s->device, "%s", amk_evaluator_device(s->local));
        s->target = *amk_evaluator_target(s->local);
        amk_log(AMK_LOG_WARN, "mpi: no worker rank is usable; rank 0 evaluates every config "
                "itself with the %s backend", amk_evaluator_backend(s->local));
    } else {
        amk_log(AMK_LOG_INFO, "mpi: %d of %d worker rank(s) evaluate on %s, parallelism %d",
                s->n_live, s->n_peers, s->device, s->par_total);
    }
    return AMK_OK;
oom:
    mpi_clear(s);
    return amk_diag_set(d, AMK_ENOMEM, "mpi backend: out of memory");
}

static double chunk_deadline(const mpi_state *s, const peer *p, size_t n)
{
    if (s->rank_timeout_s > 0)
        return s->rank_timeout_s;
    size_t rounds = (n + (size_t)p->par - 1) / (size_t)p->par;
    return 10.0 + p->slot_s * (double)rounds;
}

/* Sends queue[*head .. *head+n) to p as one chunk. 0 on success, -1 when the send failed
 * (the rank is then dead and the items stay queued). */
static int send_chunk(mpi_state *s, peer *p, const amk_config *const *cfgs,
                      const char (*ids)[17], const size_t *queue, size_t n)
{
    size_t len = sizeof(amk__mpi_chunk_head) + n * sizeof(amk__mpi_chunk_item);
    unsigned char *buf = malloc(len);
    size_t *items = malloc(n * sizeof *items);
    if (!buf || !items) { /* dead like a failed send: the caller must not retry at once */
        free(buf);
        free(items);
        mark_dead(s, p, "cannot be sent a chunk: out of memory");
        return -1;
    }
    amk__mpi_chunk_head head = {.seq = ++s->next_seq, .n = (uint32_t)n, .pad = 0,
                                .incumbent_us = s->incumbent_us};
    memcpy(buf, &head, sizeof head);
    for (size_t k = 0; k < n; k++) {
        amk__mpi_chunk_item it;
        memset(&it, 0, sizeof it);
        memcpy(it.config_id, ids[queue[k]], sizeof it.config_id);
        memcpy(it.choice, cfgs[queue[k]]->choice, sizeof it.choice);
        memcpy(buf + sizeof head + k * sizeof it, &it, sizeof it);
        items[k] = queue[k];
    }
    MPI_Request req;
    int e = MPI_Isend(buf, (int)len, MPI_BYTE, p->rank, TAG_CHUNK, amk__mpi_comm, &req);
    if (e != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING + 32];
        snprintf(why, sizeof why, "cannot be sent a chunk (%s)",
                 amk__mpi_error_text(e, msg, sizeof msg));
        free(buf);
        free(items);
        mark_dead(s, p, why);
        return -1;
    }
    free(p->buf);
    free(p->items);
    p->buf = buf;
    p->items = items;
    p->n_items = n;
    p->req = req;
    p->busy = 1;
    p->seq = head.seq;
    p->sent_at = amk_now_s();
    p->deadline = p->sent_at + chunk_deadline(s, p, n);
    return 0;
}

/* Hands the queued configs to the idle live ranks, in proportion to their parallelism. */
static void assign(mpi_state *s, const amk_config *const *cfgs, const char (*ids)[17],
                   size_t *queue, size_t *nq)
{
    while (*nq > 0) {
        int idle_par = 0;
        for (int i = 0; i < s->n_peers; i++)
            if (s->peers[i].live && !s->peers[i].busy)
                idle_par += s->peers[i].par;
        if (idle_par == 0)
            return;
        size_t total = *nq, given = 0;
        int progress = 0;
        for (int i = 0; i < s->n_peers && given < total; i++) {
            peer *p = &s->peers[i];
            if (!p->live || p->busy)
                continue;
            size_t share = (total * (size_t)p->par + (size_t)idle_par - 1) / (size_t)idle_par;
            if (share > total - given)
                share = total - given;
            if (share == 0)
                continue;
            if (send_chunk(s, p, cfgs, ids, queue + given, share) == 0) {
                given += share;
                progress = 1;
            }
        }
        /* Whatever was not given (a failed send) moves to the front of the queue. */
        memmove(queue, queue + given, (total - given) * sizeof *queue);
        *nq = total - given;
        if (!progress)
            return;
    }
}

/* Receives one verdict message if one is waiting. Returns the number of configs it
 * settled (0 for none, a dropped late reply or an unknown sender). */
static size_t receive_one(mpi_state *s, amk_verdict *out, const char (*ids)[17], int *got)
{
    int flag = 0, count = 0;
    MPI_Status st;
    *got = 0;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_VERDICTS, amk__mpi_comm, &flag, &st) != MPI_SUCCESS || !flag)
        return 0;
    *got = 1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count < 0)
        count = 0;
    if ((size_t)count > s->rcap || !s->rbuf) {
        unsigned char *nb = realloc(s->rbuf, count ? (size_t)count : 1);
        if (!nb) {
            drop_message(&st);
            return 0;
        }
        s->rbuf = nb;
        s->rcap = (size_t)count;
    }
    MPI_Recv(s->rbuf, count, MPI_BYTE, st.MPI_SOURCE, TAG_VERDICTS, amk__mpi_comm,
             MPI_STATUS_IGNORE);
    int r = st.MPI_SOURCE;
    if (r < 1 || r > s->n_peers)
        return 0;
    peer *p = &s->peers[r - 1];
    amk__mpi_chunk_head head;
    if ((size_t)count < sizeof head)
        return 0;
    memcpy(&head, s->rbuf, sizeof head);
    if (!p->live || !p->busy || head.seq != p->seq || head.n != p->n_items ||
        (size_t)count != sizeof head + (size_t)head.n * sizeof(amk_verdict)) {
        amk_log(AMK_LOG_INFO, "mpi: dropped a late or stale reply of rank %d (chunk %llu)", r,
                (unsigned long long)head.seq);
        return 0;
    }
    MPI_Wait(&p->req, MPI_STATUS_IGNORE); /* the chunk arrived: its send is complete */
    char who[32];
    snprintf(who, sizeof who, "rank %d", r);
    for (size_t k = 0; k < p->n_items; k++) {
        size_t i = p->items[k];
        amk_verdict v;
        memcpy(&v, s->rbuf + sizeof head + k * sizeof v, sizeof v);
        v.reason[sizeof v.reason - 1] = v.notes[sizeof v.notes - 1] = '\0';
        v.device[sizeof v.device - 1] = v.regime[sizeof v.regime - 1] = '\0';
        v.config_id[sizeof v.config_id - 1] = '\0';
        if (strcmp(v.config_id, ids[i]) != 0) {
            amk_verdict_init(&v);
            v.status = AMK_STATUS_RUN_ERROR;
            snprintf(v.reason, sizeof v.reason, "rank %d answered for another config", r);
        }
        out[i] = v;
        append_note(&out[i], who);
    }
    p->busy = 0;
    size_t n = p->n_items;
    p->n_items = 0;
    return n;
}

/* Evaluates queued configs on rank 0 itself (no worker left). */
static void evaluate_locally(mpi_state *s, const amk_config *const *cfgs, const size_t *queue,
                             size_t nq, amk_verdict *out)
{
    amk_diag d = {0};
    const amk_config **run = malloc(nq * sizeof *run);
    amk_verdict *got = malloc(nq * sizeof *got);
    int rc = run && got ? AMK_OK : amk_diag_set(&d, AMK_ENOMEM, "out of memory");
    if (rc == AMK_OK && !s->local) {
        rc = ensure_local(s, &d);
        if (rc == AMK_OK)
            amk_log(AMK_LOG_WARN, "mpi: no worker rank is left; rank 0 evaluates the "
                    "remaining configs itself with the %s backend",
                    amk_evaluator_backend(s->local));
    }
    if (rc == AMK_OK) {
        for (size_t k = 0; k < nq; k++)
            run[k] = cfgs[queue[k]];
        amk_evaluator_run(s->local, s->local_sp, run, nq, s->incumbent_us, got);
    }
    for (size_t k = 0; k < nq; k++) {
        amk_verdict *v = &out[queue[k]];
        if (rc == AMK_OK) {
            *v = got[k];
            append_note(v, "rank 0");
        } else {
            v->status = AMK_STATUS_NOT_RECORDED;
            snprintf(v->reason, sizeof v->reason, "no worker rank left, and rank 0 cannot "
                     "evaluate itself: %s", d.msg);
        }
    }
    free(run);
    free(got);
}

static int mpi_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out)
{
    mpi_state *s = state;
    const double t0 = amk_now_s();
    if (s->batches > 0)
        s->t_loop += t0 - s->t_last_return;
    s->batches++;
    s->configs += n;
    size_t *queue = malloc(n * sizeof *queue);
    char (*ids)[17] = malloc(n * sizeof *ids);
    if (!queue || !ids) {
        free(queue);
        free(ids);
        return AMK_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        queue[i] = i;
        amk_config_id(cfgs[i], ids[i]);
    }
    size_t nq = n, left = n;
    double tm = amk_now_s();
    assign(s, cfgs, (const char(*)[17])ids, queue, &nq);
    s->t_msg += amk_now_s() - tm;
    long us = POLL_MIN_US;
    while (left > 0) {
        if (s->n_live == 0) {
            /* Every chunk still out belonged to a dead rank and was queued again. */
            evaluate_locally(s, cfgs, queue, nq, out);
            left -= nq;
            nq = 0;
            break;
        }
        int got = 0;
        tm = amk_now_s();
        size_t done = receive_one(s, out, (const char(*)[17])ids, &got);
        left -= done;
        if (done && nq)
            assign(s, cfgs, (const char(*)[17])ids, queue, &nq);
        if (got) {
            s->t_msg += amk_now_s() - tm;
            us = POLL_MIN_US;
            continue;
        }
        double now = amk_now_s();
        for (int i = 0; i < s->n_peers; i++) {
            peer *p = &s->peers[i];
            if (!p->live || !p->busy || now <= p->deadline)
                continue;
            char why[160];
            snprintf(why, sizeof why, "missed the %.1f s deadline of a chunk of %zu config(s)",
                     p->deadline - p->sent_at, p->n_items);
            for (size_t k = 0; k < p->n_items; k++)
                queue[nq++] = p->items[k];
            p->busy = 0;
            p->n_items = 0;
            mark_dead(s, p, why);
        }
        if (nq && s->n_live > 0) {
            assign(s, cfgs, (const char(*)[17])ids, queue, &nq);
            continue;
        }
        amk__mpi_sleep_us(us);
        if (us < POLL_MAX_ROOT_US)
            us *= 2;
    }
    free(queue);
    free(ids);
    s->t_last_return = amk_now_s();
    s->t_eval += s->t_last_return - t0;
    return AMK_OK;
}

static const amk_target *mpi_target(void *state)
{
    return &((mpi_state *)state)->target;
}

static const char *mpi_device(void *state)
{
    return ((mpi_state *)state)->device;
}

static void mpi_set_incumbent(void *state, double incumbent_us)
{
    ((mpi_state *)state)->incumbent_us = incumbent_us;
}

static int mpi_parallelism(void *state)
{
    mpi_state *s = state;
    return s->par_total > 0 ? s->par_total : s->local ? amk_evaluator_parallelism(s->local) : 1;
}

/* Tells every worker to stop and waits for its goodbye, so that no reply is left in flight
 * when MPI finalises: up to BYE_WAIT_S for ranks that answered the handshake, a short grace
 * for ranks marked dead or never heard of (they may be gone for good). */
static void stop_workers(mpi_state *s)
{
    for (int i = 0; i < s->n_peers; i++)
        send_stop(&s->peers[i]);
    const double t0 = amk_now_s();
    long us = POLL_MIN_US;
    for (;;) {
        double el = amk_now_s() - t0;
        int waiting = 0;
        for (int i = 0; i < s->n_peers; i++) {
            const peer *p = &s->peers[i];
            int responsive = p->answered && !p->dead;
            waiting += !p->bye && el < (responsive ? BYE_WAIT_S : BYE_GRACE_DEAD_S);
        }
        if (waiting == 0)
            break;
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, amk__mpi_comm, &flag, &st) == MPI_SUCCESS &&
            flag) {
            drop_message(&st); /* late replies and hellos go too */
            int r = st.MPI_SOURCE;
            if (st.MPI_TAG == TAG_BYE && r >= 1 && r <= s->n_peers)
                s->peers[r - 1].bye = 1;
            us = POLL_MIN_US;
            continue;
        }
        amk__mpi_sleep_us(us);
        if (us < POLL_MAX_ROOT_US)
            us *= 2;
    }
    for (int i = 0; i < s->n_peers; i++) {
        peer *p = &s->peers[i];
        if (!p->bye && p->answered && !p->dead)
            amk_log(AMK_LOG_WARN, "mpi: rank %d did not acknowledge stop", p->rank);
        if (p->req != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
            if (!done) {
                MPI_Request_free(&p->req); /* a dead rank's chunk, never matched */
                p->keep_buf = 1;
            }
        }
    }
}

static void mpi_clear(void *state)
{
    mpi_state *s = state;
    if (s->batches > 0) {
        /* The loop's time is what passes between two evaluate calls: none before the first. */
        double b = (double)s->batches, gaps = s->batches > 1 ? b - 1 : 1;
        amk_log(AMK_LOG_INFO, "mpi: %llu batch(es), %llu config(s), %d of %d worker rank(s) "
                "live at the end; rank 0 per batch: %.3f ms search loop + %.3f ms messaging, "
                "%.3f ms waiting for workers", (unsigned long long)s->batches,
                (unsigned long long)s->configs, s->n_live, s->n_peers,
                1e3 * s->t_loop / gaps, 1e3 * s->t_msg / b, 1e3 * (s->t_eval - s->t_msg) / b);
    }
    stop_workers(s);
    for (int i = 0; i < s->n_peers; i++) {
        free(s->peers[i].items);
        if (!s->peers[i].keep_buf)
            free(s->peers[i].buf); /* a freed, unfinished request may still read it */
    }
    free(s->peers);
    amk_space_free(s->local_sp);
    amk_evaluator_free(s->local);
    free(s->backend);
    free(s->opt_target);
    free(s->opt_sim_path);
    free(s->opt_sim_objective);
    free(s->opt_cache_dir);
    free(s->opt_devices);
    free(s->rbuf);
}

static const amk_backend_type amk_backend_mpi = {
    .api_version = 1,
    .name = "mpi",
    .state_size = sizeof(mpi_state),
    .init = mpi_init,
    .evaluate = mpi_evaluate,
    .target = mpi_target,
    .device = mpi_device,
    .clear = mpi_clear,
    .parallelism = mpi_parallelism,
    .set_incumbent = mpi_set_incumbent,
};

int amk_mpi_evaluator_create(const amk_mpi_opts *o, amk_evaluator **out, amk_diag *d)
{
    creating = o;
    int rc = amk__evaluator_create_type(&amk_backend_mpi, NULL, out, d);
    creating = NULL;
    return rc;
}
