/* Internal header of the `mpi` backend (evaluator/mpi/): the message tags, polling and wire
 * format shared by rank 0 (backend_mpi.c) and the worker ranks (mpi_serve.c), and the
 * process-wide MPI state (mpi_serve.c). */
#ifndef AMK_MPI_INT_H
#define AMK_MPI_INT_H

#include "amk_mpi.h"
#include "evaluator_int.h"

#include <mpi.h>

#include <stdint.h>

enum { TAG_HELLO = 1, TAG_CHUNK, TAG_VERDICTS, TAG_STOP, TAG_BYE };

/* Polling sleeps back off from POLL_MIN_US. Rank 0 answers within POLL_MAX_ROOT_US: its
 * latency adds to every batch; an idle worker sleeps up to POLL_MAX_US, which keeps 64 ranks
 * on a few cores cheap. */
#define POLL_MIN_US 100
#define POLL_MAX_US 2000
#define POLL_MAX_ROOT_US 500

/* ---------- wire format -------------------------------------------------------------------
 * hello (worker -> 0), chunk (0 -> worker), verdicts (worker -> 0), stop (0 -> worker) and
 * bye (worker -> 0). Same binary on every rank, so structs travel as bytes. */
typedef struct amk__mpi_hello {
    int32_t ok;               /* 1: evaluator created; 0: error says why */
    int32_t parallelism;
    uint64_t fingerprint;     /* kernel spec + shape: ranks must build the same space */
    double slot_s;            /* how long one config may take on this rank (derived deadline) */
    char backend[16];         /* backend actually in use ("auto" resolved) */
    char device[64];
    amk_target target;
    char error[512];
} amk__mpi_hello;

typedef struct amk__mpi_chunk_head {
    uint64_t seq;
    uint32_t n;
    uint32_t pad;
    double incumbent_us;      /* the latency to beat (NAN = none): ranks screen with it too */
} amk__mpi_chunk_head;

typedef struct amk__mpi_chunk_item {
    char config_id[17];
    uint8_t choice[AMK_MAX_PARAMS];
} amk__mpi_chunk_item;

/* ---------- process-wide MPI state (mpi_serve.c) ------------------------------------------ */
extern MPI_Comm amk__mpi_comm; /* private duplicate of MPI_COMM_WORLD */
extern int amk__mpi_started;   /* 0 no MPI, 1 initialised here, 2 by the caller */
extern int amk__mpi_rank, amk__mpi_size;

/* MPI's text for an error code, in buf. */
const char *amk__mpi_error_text(int code, char *buf, int cap);
void amk__mpi_sleep_us(long us);
/* A digest of everything that decides the meaning of choice indices: the kernel spec and
 * the shape. Ranks that disagree (another --spec-dir, another amk) are excluded. */
uint64_t amk__mpi_space_fingerprint(const amk_spec *s, const amk_shape *sh);

#endif
