/* space_defs: kernels as data. Loads and validates kernel specs (spec.json), compiles their
 * integer expressions, parses and canonicalises configs, and enumerates, samples and walks
 * the space of valid configs. No GPU and no cost model here; device limits come in as an
 * amk_limits filled by the caller (cost_model knows the targets). Format: space_defs/SPEC.md.
 * A loaded spec is one immutable compiled object: every expression compiled and every default
 * resolved once; other modules read it through this header, never spec.json. amk types only
 * here: the cJSON-tree functions are in space_defs' in-tree JSON edge, space_json_int.h. */
#ifndef AMK_SPACE_DEFS_H
#define AMK_SPACE_DEFS_H

#include "amk_common.h"
#include "amk_record.h" /* amk_row, amk_row_upgrader */

#include <stdint.h>

#define AMK_MAX_PARAMS 24
#define AMK_MAX_DIMS 8
#define AMK_MAX_CHOICES 64
#define AMK_NAME_MAX 64

/* ---------- expressions ---------------------------------------------------------------
 * Integer-exact 64-bit: + - * / % << >> & | ! && || == != < <= > >= ?: ( ),
 * functions min(a,b) max(a,b) cdiv(a,b) log2(a) ispow2(a), and Python's integer operators as
 * pow(a,b) (a ** b, b >= 0), floordiv(a,b) (a // b) and floormod(a,b) (a % b), integer
 * literals, named values.
 * Division/modulo by zero, overflow (incl. INT64_MIN/-1, shifts outside 0..63), log2 of
 * a non-positive value are errors, never UB. Names are resolved to slots at parse time. */
typedef struct amk_expr amk_expr;

/* Resolves a name to a slot index >= 0, or returns -1 if unknown. */
typedef int (*amk_name_resolver)(void *ud, const char *name, size_t len);

AMK_API int amk_expr_parse(const char *src, amk_name_resolver resolve, void *ud, amk_expr **out,
                           amk_diag *d);
/* Evaluates with slot values; AMK_EDIVZERO / AMK_EOVERFLOW / AMK_EEXPR on failure. */
AMK_API int amk_expr_eval(const amk_expr *e, const int64_t *slots, int64_t *out, amk_diag *d);
/* Marks in `used` (length nslots) every slot the expression reads. */
AMK_API void amk_expr_slots(const amk_expr *e, unsigned char *used, int nslots);
AMK_API const char *amk_expr_source(const amk_expr *e);
AMK_API void amk_expr_free(amk_expr *e);

/* ---------- device limits (named values usable in spec expressions) --------------------- */
#define AMK_LIMITS_MAP(XX)                                                           \
    XX(max_threads, "threads per block")                                             \
    XX(max_smem, "shared memory per block without opt-in, bytes")                    \
    XX(max_smem_optin, "shared memory per block with opt-in, bytes")                 \
    XX(smem_per_sm, "shared memory per SM/CU, bytes")                                \
    XX(warp, "warp / wavefront size")                                                \
    XX(sm_count, "SMs / CUs")                                                        \
    XX(regs_per_sm, "32-bit registers per SM / CU")                                  \
    XX(max_regs_per_thread, "registers per thread")                                  \
    XX(max_blocks_per_sm, "resident blocks per SM / CU")                             \
    XX(max_threads_per_sm, "resident threads per SM / CU")                           \
    XX(max_grid_x, "grid x limit")                                                   \
    XX(max_grid_yz, "grid y and z limit")                                            \
    XX(l2_bytes, "L2 cache bytes")

typedef struct amk_limits {
#define AMK__LIM_FIELD(name, doc) int64_t name;
    AMK_LIMITS_MAP(AMK__LIM_FIELD)
#undef AMK__LIM_FIELD
} amk_limits;

/* ---------- specs ------------------------------------------------------------------------ */
typedef struct amk_spec amk_spec;

/* Loads DIR/spec.json and validates it completely: schema, expressions (parsed against the
 * declared names), derived-value cycles, defaults among choices, default config valid on the
 * default shape for at least one built-in target is NOT checked here (no targets here).
 * Errors read "DIR/spec.json: params.BM.values[2]: not an integer". */
AMK_API int amk_spec_load(const char *dir, amk_spec **out, amk_diag *d);
AMK_API void amk_spec_free(amk_spec *s);

AMK_API const char *amk_spec_name(const amk_spec *s);
AMK_API const char *amk_spec_description(const amk_spec *s);
AMK_API const char *amk_spec_dir(const amk_spec *s);
/* spec.json as it was parsed, printed as compact JSON (a digest of the spec's meaning: the
 * MPI backend compares it across ranks). Borrowed. */
AMK_API const char *amk_spec_text(const amk_spec *s);

AMK_API int amk_spec_n_params(const amk_spec *s);
AMK_API const char *amk_spec_param_name(const amk_spec *s, int i);
AMK_API int amk_spec_param_index(const amk_spec *s, const char *name); /* -1 if unknown */
AMK_API int amk_spec_param_n_choices(const amk_spec *s, int i);
AMK_API double amk_spec_raw_size(const amk_spec *s); /* product of the params' choice counts */
AMK_API int64_t amk_spec_param_value(const amk_spec *s, int i, int choice); /* the -D value */
/* For enum params (declared with strings) the label of a choice, else NULL. */
AMK_API const char *amk_spec_param_label(const amk_spec *s, int i, int choice);
AMK_API int amk_spec_param_default(const amk_spec *s, int i); /* default choice index */
AMK_API const char *amk_spec_param_doc(const amk_spec *s, int i); /* the "doc" text, or NULL */

/* Derived values (declaration order) and restrictions, as compiled. written_as_number: the
 * spec gave an integer literal rather than an expression string (echoed back as a number). */
typedef struct amk_spec_named_expr {
    const char *name; /* NULL for a restriction */
    const amk_expr *expr;
    int written_as_number;
} amk_spec_named_expr;
AMK_API int amk_spec_n_derived(const amk_spec *s);
/* AMK_EINVAL: i */
AMK_API int amk_spec_derived(const amk_spec *s, int i, amk_spec_named_expr *out);
AMK_API int amk_spec_n_restrictions(const amk_spec *s);
AMK_API int amk_spec_restriction(const amk_spec *s, int i, amk_spec_named_expr *out);

/* The arch to compile s for on a target of `vendor` ("nvidia" | "amd") and `arch` ("sm_90",
 * "gfx942"), from the spec's optional "requires" field. Without one: arch itself. With one:
 * the vendor must be listed and arch must be the required arch, or on NVIDIA its base (an
 * sm_90 device runs sm_90a code, which is what is compiled then). AMK_OK with the arch in
 * out; AMK_EUNSUPPORTED with a message naming the requirement; AMK_EINVAL (cap too small). */
AMK_API int amk_spec_compile_arch(const amk_spec *s, const char *vendor, const char *arch,
                                  char *out, size_t cap, amk_diag *d);

AMK_API int amk_spec_n_dims(const amk_spec *s);
AMK_API const char *amk_spec_dim_name(const amk_spec *s, int i);
AMK_API int amk_spec_n_dtypes(const amk_spec *s);
AMK_API const char *amk_spec_dtype_name(const amk_spec *s, int i); /* "f32" "f16" "bf16" ... */
AMK_API int amk_dtype_size(const char *dtype);                     /* bytes; 0 if unknown */

/* ---------- shapes ----------------------------------------------------------------------- */
typedef struct amk_shape {
    int64_t dims[AMK_MAX_DIMS]; /* in spec dim order */
    int dtype;                  /* index into the spec's dtypes */
} amk_shape;

AMK_API int amk_spec_n_shapes(const amk_spec *s); /* named shapes; index 0 is the default */
AMK_API const char *amk_spec_shape_name(const amk_spec *s, int i);
AMK_API void amk_spec_shape(const amk_spec *s, int i, amk_shape *out);
/* "M=4096,N=4096,K=4096,dtype=bf16": unspecified dims/dtype come from the default shape;
 * a shape name ("decode") is accepted too. Unknown dim, non-integer, value < 1 → error. */
AMK_API int amk_shape_parse(const amk_spec *s, const char *text, amk_shape *out, amk_diag *d);
/* Canonical text: dims in spec order, then dtype: "M=4096,N=4096,K=4096,dtype=f32". */
AMK_API void amk_shape_format(const amk_spec *s, const amk_shape *sh, char *out, size_t cap);

/* ---------- configs ---------------------------------------------------------------------- */
/* A point of the space: spec + shape + one choice index per param. Plain value type:
 * copy with =, compare with amk_config_equal. */
typedef struct amk_config {
    const amk_spec *spec;
    amk_shape shape;
    uint8_t choice[AMK_MAX_PARAMS];
} amk_config;

AMK_API void amk_config_default(const amk_spec *s, const amk_shape *sh, amk_config *out);
AMK_API int64_t amk_config_param(const amk_config *c, int i); /* value of param i */
AMK_API int amk_config_equal(const amk_config *a, const amk_config *b);
typedef struct amk_registry amk_registry;
/* A config from its JSON text, {"kernel":..,"shape":{..},"params":{..}}: every param present,
 * known, an integer (or enum label) among its declared choices; "64 -DEVIL" is rejected.
 * (cJSON trees in and out, in-tree: space_json_int.h.) */
AMK_API int amk_config_parse(const amk_registry *r, const char *text, amk_config *out, amk_diag *d);
/* The configs of a file (path "-": stdin), as `amk evaluate` and `amk compile --config` read
 * them: a config object, or the whole output of `amk propose` (its "config" member is
 * used), or with many != 0 also an array of those. *out is malloc'd (*n entries). Errors
 * name the file (and "config I" in an array): AMK_ENOENT for a missing file or an unknown
 * kernel, AMK_EPARSE for malformed JSON, AMK_ECONFIG and the amk_config_from_json codes. */
AMK_API int amk_configs_read(const amk_registry *r, const char *path, int many, amk_config **out,
                             size_t *n, amk_diag *d);
/* Canonical form: compact JSON, keys sorted at every level, integers only (enum params by
 * label). Caller frees. config_id = amk_hash_hex(amk_hash64(canonical)). */
AMK_API char *amk_config_canonical(const amk_config *c);
AMK_API void amk_config_id(const amk_config *c, char out[17]);
/* Compact JSON of the params only, keys sorted: {"BK":8,"BM":128,...}. Caller frees. */
AMK_API char *amk_config_params_json(const amk_config *c);
/* Parses amk_config_params_json output back (used when replaying results.tsv rows). */
AMK_API int amk_config_from_params_json(const amk_spec *s, const amk_shape *sh, const char *json,
                                        amk_config *out, amk_diag *d);
/* The same for params recorded (a results.tsv row, an export database) when the spec may
 * have had fewer params: a param they do not name takes its default (a param joins a spec
 * with a default that keeps the kernel as it was: SPEC.md), so the same kernel is read back.
 * Returns how many params were so filled (0: the recorded config_id is this config's), or
 * an error code < 0 (malformed JSON, an unknown param or value). */
AMK_API int amk_config_from_recorded(const amk_spec *s, const amk_shape *sh, const char *json,
                                     amk_config *out, amk_diag *d);
/* The id a results.tsv row's config has under s: its recorded config_id, unless the row is
 * of s and names fewer params (amk_config_from_recorded); then that config's id. */
struct amk_row;
AMK_API void amk_row_config_id(const amk_spec *s, const struct amk_row *r, char id[17]);
/* Rewrites row r as config c: its params JSON and id. 1 done; 0 (r unchanged) when the
 * params do not fit the row or memory ran out. */
AMK_API int amk_row_set_config(struct amk_row *r, const amk_config *c);
/* Compiler defines: n strings "-DNAME=<int>" written into out[i] (each < 96 bytes), one per
 * param, built only from declared integer choices. Returns the count. */
AMK_API int amk_config_defines(const amk_config *c, char out[][96], int cap);

/* ---------- evaluation of a config ------------------------------------------------------- */
typedef struct amk_launch {
    int64_t grid[3], block[3], shared_bytes;
    int64_t cluster[3]; /* thread-block cluster; 1 x 1 x 1 = no cluster launch */
} amk_launch;

/* A TMA tensor map ("tensor_maps" in SPEC.md) evaluated for a config: what the GPU layer
 * hands to cuTensorMapEncodeTiled with the buffer's device address. */
#define AMK_TMAP_MAX_RANK 5
typedef struct amk_tensor_map {
    char name[AMK_NAME_MAX];
    char buffer[AMK_NAME_MAX];
    char dtype[16];                        /* the buffer's element type ("bf16") */
    int rank;                              /* 1..AMK_TMAP_MAX_RANK */
    int64_t dims[AMK_TMAP_MAX_RANK];       /* elements, innermost (contiguous) first */
    int64_t strides[AMK_TMAP_MAX_RANK - 1]; /* bytes, of dims 1..rank-1 */
    int64_t box[AMK_TMAP_MAX_RANK];        /* elements per copy, each 1..256 */
    int swizzle;                           /* bytes: 0 (none), 32, 64, 128 */
    int l2_promotion;                      /* bytes: 0 (none), 64, 128, 256 */
} amk_tensor_map;

/* Cost terms from the spec's "cost" section (DESIGN §2). unit names a peak rate of the
 * target: "simt_f32", "tf32", "f16", "bf16", "fp8", "int8", or "none" (memory-bound). */
typedef struct amk_cost_terms {
    int64_t flops;         /* useful arithmetic */
    int64_t min_bytes;     /* compulsory global-memory traffic (roofline floor) */
    int64_t traffic_bytes; /* modelled traffic for this tiling (prediction); >= min_bytes */
    int64_t regs_estimate; /* registers per thread, estimated; 0 if spec gives none */
    char unit[16];
} amk_cost_terms;

/* Checks restrictions (with limits as named values), then the launch's cluster (the grid a
 * multiple of it) and the tensor maps' rules (amk_config_tensor_map). AMK_OK when valid;
 * AMK_ERESTRICT with d->msg = "restriction 'BM % TM == 0' is false" (the spec's text),
 * "tensor map 'tmA': box[0] = 512 is outside 1..256", or an expression error.
 * In this function and the three below, lim may be NULL: generous H100-like limits are used. */
AMK_API int amk_config_check(const amk_config *c, const amk_limits *lim, amk_diag *d);
/* Value of any named thing (dim, param, derived, limit, elt) or of an expression text. */
AMK_API int amk_config_eval(const amk_config *c, const amk_limits *lim, const char *expr,
                            int64_t *out, amk_diag *d);
AMK_API int amk_config_launch(const amk_config *c, const amk_limits *lim, amk_launch *out,
                              amk_diag *d);
AMK_API int amk_config_cost(const amk_config *c, const amk_limits *lim, amk_cost_terms *out,
                            amk_diag *d);
/* Tensor maps of the spec (by declaration order; args name them). */
AMK_API int amk_spec_n_tensor_maps(const amk_spec *s);
AMK_API const char *amk_spec_tensor_map_name(const amk_spec *s, int i);
/* Evaluates tensor map i for c and checks what cuTensorMapEncodeTiled demands (dims 1..2^32,
 * strides multiples of 16 below 2^40, box 1..256 with box[0]*elt a multiple of 16 and at most
 * the swizzle span, the map inside its buffer). AMK_ERESTRICT naming the map and the rule. */
AMK_API int amk_config_tensor_map(const amk_config *c, const amk_limits *lim, int i,
                                  amk_tensor_map *out, amk_diag *d);

/* ---------- the compiled kernel, reference, buffers, tolerance and cost terms -----------
 * Everything below is resolved once by amk_spec_load (defaults included); the evaluator and
 * the cost model read it here, never spec.json. Strings are borrowed from the spec. */
/* "source": template path, relative to dir */
AMK_API const char *amk_spec_source(const amk_spec *s);
AMK_API const char *amk_spec_entry(const amk_spec *s);  /* "entry": the kernel's function name */
AMK_API int amk_spec_n_args(const amk_spec *s); /* "args": buffer, tensor map or value names */
AMK_API const char *amk_spec_arg(const amk_spec *s, int i);

typedef struct amk_spec_reference {
    const char *source, *entry;
    const char *host;   /* built-in host reference name, or NULL */
    int default_config; /* 1: the reference is the template at its default config */
} amk_spec_reference;
AMK_API void amk_spec_get_reference(const amk_spec *s, amk_spec_reference *out);
/* "reference.vary" (default_config references only): the params that change what the
 * kernel computes, which the reference takes from the config it checks. Param indices. */
AMK_API int amk_spec_n_reference_vary(const amk_spec *s);
AMK_API int amk_spec_reference_vary(const amk_spec *s, int i); /* -1 when i is out of range */
/* The config c's reference runs at: c itself for an independent reference; for a
 * default_config one, the default config at c's shape with c's values of the "vary" params.
 * With "vary", that config must be valid (amk_config_check with lim): AMK_ERESTRICT or the
 * check's code, d->msg naming it ("the reference config (the default with filter_height=3)
 * is not valid: restriction '...' is false"); *out is untouched on error. */
AMK_API int amk_config_reference_config(const amk_config *c, const amk_limits *lim,
                                        amk_config *out, amk_diag *d);
/* 1 when a and b are checked against the same reference program: same spec and dtype, and
 * the same values of the "vary" params. */
AMK_API int amk_config_same_reference(const amk_config *a, const amk_config *b);
AMK_API int amk_spec_n_reference_args(const amk_spec *s);
AMK_API const char *amk_spec_reference_arg(const amk_spec *s, int i);
/* The reference's launch expressions evaluated at c (no limit checks: it is the reference;
 * pass amk_config_reference_config's config). Errors are prefixed "reference.launch". */
AMK_API int amk_config_reference_launch(const amk_config *c, const amk_limits *lim, amk_launch *out,
                                        amk_diag *d);

/* "peer": a vendor-library operation amk times beside the kernel, on the same buffers, with
 * the same timing loop (results' vs_peer). gemm: C[m,n] = A[m,k] B[k,n], row-major, one
 * dtype (cuBLAS on NVIDIA); copy: a device-to-device copy of the source buffer's bytes into
 * the destination (the memory-bound kernels' ceiling). */
typedef enum amk_peer_op { AMK_PEER_NONE, AMK_PEER_GEMM, AMK_PEER_COPY } amk_peer_op;
typedef struct amk_spec_peer {
    amk_peer_op op;
    int a, b, c;              /* buffer indices: gemm A, B, C; copy: a source, c destination;
                                 -1 unused */
    const amk_expr *m, *n, *k; /* gemm dims; NULL otherwise */
} amk_spec_peer;
AMK_API void amk_spec_get_peer(const amk_spec *s, amk_spec_peer *out);
AMK_API const char *amk_peer_op_name(amk_peer_op op); /* "", "gemm", "copy" */

/* SCRATCH: device memory the kernel uses as it likes (split-K pieces): neither filled nor
 * compared, poisoned before each run like an output. */
typedef enum amk_buffer_role {
    AMK_BUFFER_IN,
    AMK_BUFFER_OUT,
    AMK_BUFFER_INOUT,
    AMK_BUFFER_SCRATCH
} amk_buffer_role;
typedef struct amk_spec_buffer {
    const char *name;
    const char *dtype; /* "f32", "bf16", ... or "input": the shape's dtype */
    amk_buffer_role role;
    const char *init;  /* "uniform" (the default), "normal", "positive", "zero", "constant" */
    const amk_expr *count;
    const amk_expr *tolerance_reduction; /* NULL: the spec's tolerance.reduction */
    double value;        /* init "constant": the value of every element */
    int constant_memory; /* 1: an input also copied into the __constant__ symbol `symbol` */
    const char *symbol;  /* the symbol's name (default: the buffer's); NULL unless constant */
    const char *data;    /* input: file of the folder holding its bytes (.npy or raw), or NULL */
    const char *answer;  /* output: file of its expected bytes, or NULL (the reference's) */
    int external;        /* output: 1 = "check": "external": judged by a function outside
                            amk (amk_backend_opts.verify), never compared with the reference */
} amk_spec_buffer;
AMK_API int amk_spec_n_buffers(const amk_spec *s);
AMK_API int amk_spec_buffer_at(const amk_spec *s, int i, amk_spec_buffer *out); /* AMK_EINVAL: i */

/* "scalars": by-value arguments of a fixed type (SPEC.md). amk_spec_scalar_at: AMK_EINVAL
 * when i is out of range. */
typedef struct amk_spec_scalar {
    const char *name;
    const char *dtype; /* "f32" "f64" "i32" "u32" "i64" "u64" */
    double value;      /* the value (float dtypes; integers too, rounded) */
    int64_t ivalue;    /* integer dtypes: the exact value (u64: its bits) */
} amk_spec_scalar;
AMK_API int amk_spec_n_scalars(const amk_spec *s);
AMK_API int amk_spec_scalar_at(const amk_spec *s, int i, amk_spec_scalar *out);
/* "headers": files of the folder (relative names) that `#include "name"` finds. */
AMK_API int amk_spec_n_headers(const amk_spec *s);
AMK_API const char *amk_spec_header(const amk_spec *s, int i); /* NULL: i out of range */
/* "defines": compiler defines besides the params (name, integer expression). */
AMK_API int amk_spec_n_defines(const amk_spec *s);
AMK_API int amk_spec_define_at(const amk_spec *s, int i, const char **name,
                               const amk_expr **e);

/* "tolerance": defaults resolved here and only here (SPEC.md). */
typedef struct amk_spec_tolerance {
    const amk_expr *reduction;
    double rtol_scale; /* 1 when not given */
    double atol;       /* NAN when not given: the check derives it from max|ref| */
} amk_spec_tolerance;
AMK_API void amk_spec_get_tolerance(const amk_spec *s, amk_spec_tolerance *out);

/* The optional memory terms of "cost" (SPEC.md), in this order. */
typedef enum amk_memory_term {
    AMK_MEM_INFLIGHT_BYTES, AMK_MEM_LATENCY_ROUNDS, AMK_MEM_SYNC_STEPS, AMK_MEM_REREAD_BYTES,
    AMK_MEM_BLOCK_FOOTPRINT, AMK_MEM_SEGMENT_BYTES
} amk_memory_term;
#define AMK_MEMORY_TERMS 6
AMK_API const char *amk_memory_term_name(amk_memory_term t); /* "inflight_bytes", ... */
/* The compiled expression of a cost field by its spec.json name ("flops", "min_bytes",
 * "traffic_bytes", "regs", "uniform_blocks" or a memory term), or NULL when absent. */
AMK_API const amk_expr *amk_spec_cost_expr(const amk_spec *s, const char *field);

/* Value of a compiled expression of c's spec (from the accessors above) for c. */
AMK_API int amk_config_eval_expr(const amk_config *c, const amk_limits *lim, const amk_expr *e,
                                 int64_t *out, amk_diag *d);

/* ---------- the space of one spec at one shape on one device ---------------------------- */
/* Random choices for sampling come from the caller's generator, so a search keeps one
 * reproducible stream: below(state, n) returns a uniform integer in 0..n-1 (with GSL:
 * gsl_rng_uniform_int). */
typedef struct amk_rng {
    unsigned long (*below)(void *state, unsigned long n);
    void *state;
} amk_rng;

typedef struct amk_space amk_space;

/* sh NULL = the default shape; lim NULL = generous H100-like limits. The space borrows s. */
AMK_API int amk_space_create(const amk_spec *s, const amk_shape *sh, const amk_limits *lim,
                             amk_space **out, amk_diag *d);
AMK_API void amk_space_free(amk_space *sp);
AMK_API const amk_spec *amk_space_spec(const amk_space *sp);
AMK_API const amk_shape *amk_space_shape(const amk_space *sp);
AMK_API const amk_limits *amk_space_limits(const amk_space *sp);
AMK_API double amk_space_raw_size(const amk_space *sp); /* product of choice counts */
AMK_API int amk_space_valid(const amk_space *sp, const amk_config *c, amk_diag *d);
/* Calls cb on every valid config in odometer order (last param fastest); cb returns nonzero
 * to stop early. Returns AMK_OK or an error. Fast: 10^7 raw points in seconds. */
AMK_API int amk_space_enumerate(const amk_space *sp, int (*cb)(const amk_config *c, void *ud),
                                void *ud);
AMK_API int64_t amk_space_count(const amk_space *sp); /* valid configs (enumerates); <0 on error */
/* Uniform among valid configs by rejection from the raw product (no enumeration).
 * AMK_EEMPTY when max_tries draws found none. */
AMK_API int amk_space_sample(const amk_space *sp, const amk_rng *rng, amk_config *out,
                             long max_tries);
/* Valid neighbours: one param moved to an adjacent choice index. Returns count (<= cap). */
AMK_API int amk_space_neighbours(const amk_space *sp, const amk_config *c, amk_config *out, int cap)
    ;
/* Nearest valid config to a point of [0,1)^n_params (used for Sobol designs): maps u to
 * choice indices, then searches outward by neighbour moves. AMK_EEMPTY if none found. */
AMK_API int amk_space_from_unit(const amk_space *sp, const double *u, const amk_rng *rng,
                                amk_config *out);

/* ---------- import of the tuning community's T1 spaces (import_t1.c) --------------------- */
typedef struct amk_import_opts {
    const char *name;        /* kernel name; NULL = from the T1 file name ("gemm_milo") */
    const char *kernel_file; /* the CUDA kernel source (--kernel); NULL = the space only */
    /* With kernel_file: "ARG=FILE" entries. data: the input ARG's bytes come from FILE
     * (.npy or raw; an .npy gives the element type and count); answer: FILE holds the
     * expected output of ARG, the correctness reference of that output. The files are
     * copied into the folder (hard-linked with link_data). */
    const char *const *data;
    int ndata;
    const char *const *answers;
    int nanswers;
    /* With kernel_file: params that change what the kernel computes (a filter size): the
     * reference runs with the checked config's values of them (spec "reference.vary"). */
    const char *const *vary;
    int nvary;
    /* 1: the data and answer files are hard-linked into the folder where the filesystem
     * allows (else copied), for a caller whose files stay unchanged while the folder lives
     * (amk.tune_kernel's own temporary files: no second copy of large inputs). */
    int link_data;
} amk_import_opts;

/* Reads a T1 space file (Kernel Tuner's benchmark_hub format) and writes the kernel folder
 * out_dir: spec.json with the params in the T1 order (values sorted ascending), the
 * conditions translated to restrictions, the problem size as the default shape. out_dir
 * must not exist or be empty; the folder is written beside it and renamed only once it
 * loads, so on error nothing is written. Errors name the field, the construct and its
 * column: "S.json: ConfigurationSpace.Conditions[2].Expression: lambda at column 1 in ...".
 * With opts->kernel_file, the KernelSpecification becomes the kernel section (template =
 * the file, launch from LocalSize / GridDiv / ProblemSize, buffers and int scalars from the
 * Arguments) and the reference is the kernel at the default config (SPEC.md: weaker than an
 * independent reference). opts may be NULL. */
AMK_API int amk_import_t1(const char *t1_path, const char *out_dir, const amk_import_opts *opts,
                          amk_diag *d);

/* ---------- the registry of known kernels ------------------------------------------------ */
/* Loads the built-in kernels: $AMK_KERNELS_DIR if set, else amk_fs_share_dir("kernels"):
 * next to the executable (installed share/amk/kernels, or a build tree's source
 * space_defs/kernels), then the configure-time install and source paths. */
AMK_API int amk_registry_create(amk_registry **out, amk_diag *d);
/* Adds DIR: either one kernel folder (has spec.json) or a folder of kernel folders.
 * A user kernel with a built-in's name replaces it (a warning is logged). */
AMK_API int amk_registry_add_dir(amk_registry *r, const char *dir, amk_diag *d);
/* The built-in kernels plus each of dirs[0..n-1] (a command's --spec-dir options, and so
 * named in messages): "--spec-dir DIR: no such directory", or the load error naming DIR.
 * AMK_ENOMEM, AMK_ENOENT or the spec's error; *out is NULL on error. */
AMK_API int amk_registry_open(const char *const *dirs, int n, amk_registry **out, amk_diag *d);
/* The kernel called name, or AMK_ENOENT with "unknown kernel 'x' (known: a, b; ...)". */
AMK_API int amk_registry_lookup(const amk_registry *r, const char *name, const amk_spec **out,
                                amk_diag *d);
AMK_API const amk_spec *amk_registry_find(const amk_registry *r, const char *name);
/* The reader's upgrader (amk_row_upgrader, amk_record.h) for rows recorded before a param
 * joined their kernel's spec: a row of a kernel reg knows that names fewer params gets the
 * params it lacks at their defaults (amk_config_from_recorded), and that config's id and
 * params JSON; every other row is left as it is. reg is borrowed (NULL: rows as recorded). */
AMK_API amk_row_upgrader amk_registry_upgrader(const amk_registry *reg);
AMK_API int amk_registry_count(const amk_registry *r);
AMK_API const amk_spec *amk_registry_at(const amk_registry *r, int i); /* sorted by name */
AMK_API void amk_registry_free(amk_registry *r);

#endif
