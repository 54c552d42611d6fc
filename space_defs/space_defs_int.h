/* space_defs internals shared by expr.c, spec.c, config.c, space.c and registry.c (and the
 * module's tests). Not installed; other modules use amk_space_defs.h only. */
#ifndef AMK_SPACE_DEFS_INT_H
#define AMK_SPACE_DEFS_INT_H

#include "space_json_int.h"

#define AMK__MAX_DERIVED 64
#define AMK__MAX_RESTRICT 64
#define AMK__MAX_DTYPES 8
#define AMK__MAX_BUFFERS 32
#define AMK__MAX_ARGS 64
#define AMK__MAX_SHAPES 64
#define AMK__MAX_TMAPS 8
#define AMK__N_LIMITS 13
/* dims + dtype + elt + limits + params + derived */
#define AMK__MAX_SLOTS (AMK_MAX_DIMS + 2 + AMK__N_LIMITS + AMK_MAX_PARAMS + AMK__MAX_DERIVED)
#define AMK__EXPR_STACK 256 /* evaluation stack; deeper expressions are refused at parse */

/* ---- expressions ---- */
enum {
    AMK__OP_CONST, AMK__OP_LOAD, AMK__OP_NEG, AMK__OP_NOT, AMK__OP_BOOL,
    AMK__OP_ADD, AMK__OP_SUB, AMK__OP_MUL, AMK__OP_DIV, AMK__OP_MOD, AMK__OP_SHL, AMK__OP_SHR,
    AMK__OP_BAND, AMK__OP_BOR, AMK__OP_EQ, AMK__OP_NE, AMK__OP_LT, AMK__OP_LE, AMK__OP_GT,
    AMK__OP_GE, AMK__OP_MIN, AMK__OP_MAX, AMK__OP_CDIV, AMK__OP_LOG2, AMK__OP_ISPOW2,
    AMK__OP_POW, AMK__OP_FLOORDIV, AMK__OP_FLOORMOD, /* Python's ** // % on integers */
    AMK__OP_JZ_KEEP,  /* &&: top == 0 → keep it and jump, else pop */
    AMK__OP_JNZ_ONE,  /* ||: top != 0 → replace by 1 and jump, else pop */
    AMK__OP_JZ_POP,   /* ?: pop, jump when zero */
    AMK__OP_JMP
};

/* A binary operator whose right operand is a slot or a literal carries it inline. */
#define AMK__FUSE_SLOT 0x100
#define AMK__FUSE_CONST 0x200
#define AMK__OP_MASK 0xff

typedef struct amk__insn {
    int32_t op;
    int32_t col; /* 1-based source column of the operator (for error messages) */
    int64_t v;   /* constant, slot index or jump target */
} amk__insn;

struct amk_expr {
    char *src;
    int n;
    int maxdepth;
    amk__insn code[];
};

/* Evaluates without formatting a message: returns AMK_OK, AMK_EDIVZERO, AMK_EOVERFLOW or
 * AMK_EEXPR, and on error the failing instruction index in *errpc (for the message). */
int amk__expr_run(const amk_expr *e, const int64_t *slots, int64_t *out, int *errpc);
/* Formats the message of a failed amk__expr_run into d; returns code. */
int amk__expr_error(const amk_expr *e, const int64_t *slots, int code, int errpc, amk_diag *d);

/* ---- specs ---- */
typedef struct amk__param {
    char name[AMK_NAME_MAX];
    int n;
    int def;
    int64_t values[AMK_MAX_CHOICES];
    char *labels[AMK_MAX_CHOICES]; /* NULL for integer params */
    int is_enum;
    char *doc; /* NULL unless given */
} amk__param;

typedef struct amk__derived {
    char name[AMK_NAME_MAX];
    amk_expr *e;
    int slot;
    int level; /* highest param index it depends on (transitively), -1 for none */
    unsigned char deps[AMK__MAX_SLOTS]; /* direct slot reads */
    int written_as_number;              /* spec.json gave an integer, not a string */
} amk__derived;

typedef struct amk__restrict {
    amk_expr *e;
    int level;
    int written_as_number;
} amk__restrict;

enum { AMK__ROLE_IN, AMK__ROLE_OUT, AMK__ROLE_INOUT, AMK__ROLE_SCRATCH };

typedef struct amk__buffer {
    char name[AMK_NAME_MAX];
    int dtype;  /* -1: the shape's dtype ("input"), else index into amk__dtype_names */
    int role;
    char init[16];
    double value;            /* init "constant": every element */
    int constant_memory;     /* "memory": "constant": also copied into __constant__ symbol */
    char symbol[AMK_NAME_MAX];
    char data[128], answer[128]; /* files of the folder ("" = none) */
    int external;            /* "check": "external": judged outside amk, not compared */
    amk_expr *count;
    amk_expr *tol_reduction; /* NULL unless given */
} amk__buffer;

/* A by-value kernel argument of a fixed type ("scalars", SPEC.md). */
#define AMK__MAX_SCALARS 16
typedef struct amk__scalar {
    char name[AMK_NAME_MAX];
    char dtype[8]; /* f32 f64 i32 u32 i64 u64 */
    double value;  /* float dtypes */
    int64_t ivalue; /* integer dtypes (u64 as its bits) */
} amk__scalar;

#define AMK__MAX_HEADERS 8
/* A compiler define besides the params ("defines", SPEC.md). */
#define AMK__MAX_DEFINES 16
typedef struct amk__define {
    char name[AMK_NAME_MAX];
    amk_expr *e;
} amk__define;

typedef struct amk__launch_exprs {
    amk_expr *grid[3], *block[3], *shared;
    amk_expr *cluster[3]; /* NULL when the spec gives no "cluster" (1 x 1 x 1) */
} amk__launch_exprs;

/* A TMA descriptor the GPU layer encodes per buffer set ("tensor_maps", SPEC.md). */
typedef struct amk__tmap {
    char name[AMK_NAME_MAX];
    int buffer; /* index into buffers */
    int rank;
    amk_expr *dims[AMK_TMAP_MAX_RANK], *strides[AMK_TMAP_MAX_RANK - 1];
    amk_expr *box[AMK_TMAP_MAX_RANK];
    int swizzle, l2_promotion;
} amk__tmap;

struct amk_spec {
    char *dir;
    char *path; /* DIR/spec.json */
    char *text; /* spec.json as parsed, printed compact (amk_spec_text) */
    char name[AMK_NAME_MAX];
    char *description;

    int ndims;
    char dims[AMK_MAX_DIMS][AMK_NAME_MAX];
    int ndtypes;
    int dtypes[AMK__MAX_DTYPES]; /* indices into amk__dtype_names */

    int nshapes;
    char shape_names[AMK__MAX_SHAPES][AMK_NAME_MAX];
    amk_shape shapes[AMK__MAX_SHAPES];

    int nparams;
    amk__param params[AMK_MAX_PARAMS];

    int nderived;
    amk__derived derived[AMK__MAX_DERIVED]; /* declaration order; slot = derived_base + i */
    int dorder[AMK__MAX_DERIVED];           /* evaluation order (topological, by level) */

    int nrestrict;
    amk__restrict restrict_[AMK__MAX_RESTRICT];

    int nbuffers;
    amk__buffer buffers[AMK__MAX_BUFFERS];
    int nargs;
    char args[AMK__MAX_ARGS][AMK_NAME_MAX];
    int ntmaps;
    amk__tmap tmaps[AMK__MAX_TMAPS];
    int nscalars;
    amk__scalar scalars[AMK__MAX_SCALARS];
    int ndefines;
    amk__define defines[AMK__MAX_DEFINES];
    int nheaders; /* "headers": files of the folder that `#include "name"` finds */
    char headers[AMK__MAX_HEADERS][128];

    char *source, *entry;
    amk__launch_exprs launch;
    amk_expr *flops, *min_bytes, *traffic, *regs, *uniform_blocks;
    amk_expr *memory[AMK_MEMORY_TERMS]; /* NULL when absent; amk_memory_term order */
    char unit[16];

    char *ref_source, *ref_entry, *ref_host;
    int ref_default_config;
    int nref_vary; /* "vary": params the reference takes from the checked config */
    int ref_vary[AMK_MAX_PARAMS]; /* their indices, in the order given */
    int nref_args;
    char ref_args[AMK__MAX_ARGS][AMK_NAME_MAX];
    amk__launch_exprs ref_launch;

    amk_expr *tol_reduction;
    double rtol_scale, atol; /* atol NAN when not given: derived from max|ref| */

    /* "peer": the vendor-library operation timed beside the kernel (AMK_PEER_NONE when
     * absent): buffer indices and, for gemm, the dims. */
    int peer_op, peer_a, peer_b, peer_c;
    amk_expr *peer_m, *peer_n, *peer_k;

    /* "requires": the exact compile arch per vendor ("" = that vendor is not supported);
     * has_requires = 0 when the spec states no requirement (every vendor, any arch). */
    int has_requires;
    char requires[2][16]; /* [0] nvidia, [1] amd */

    /* slot layout */
    int slot_dtype, slot_elt, slot_limits, slot_params, slot_derived, nslots;
};

extern const char *const amk__dtype_names[];
extern const int amk__dtype_sizes[];
int amk__dtype_index(const char *name); /* -1 if unknown */
extern const char *const amk__limit_names[AMK__N_LIMITS];

/* Generous limits (H100-like, opt-in shared memory) used where the caller gives none. */
const amk_limits *amk__limits_generous(void);

/* Resolver over every named value of a spec (dims, dtype, elt, limits, params, derived). */
int amk__spec_resolve(void *spec, const char *name, size_t len);

/* Fills the base slots: dims, dtype, elt, limits and param values. */
void amk__slots_base(const amk_spec *s, const amk_shape *sh, const amk_limits *lim,
                     int64_t *slots);
/* The launch limits that follow from the spec, on filled slots: every grid and block
 * dimension >= 1, the block's threads <= max_threads, the grid within max_grid_x /
 * max_grid_yz, 0 <= shared_bytes <= max_smem_optin. AMK_OK, AMK_ERESTRICT naming the limit,
 * or the expression's error. A config that fails is invalid (as a false restriction), so
 * `amk space` counts and the search draw only configs the evaluator can launch. */
int amk__launch_check(const amk_spec *s, const int64_t *slots, const amk_limits *lim,
                      amk_diag *d);
/* Checks that every choice index of c is in range. */
int amk__config_choices_ok(const amk_config *c, amk_diag *d);

/* Parses a JSON params object into choice indices (every param required, known, a choice).
 * `where` prefixes messages ("params"). */
int amk__params_from_json(const amk_spec *s, const cJSON *obj, uint8_t *choice, amk_diag *d);

/* ---- the Python subset of Kernel Tuner's T1 space files (pyexpr.c, amk import) ---- */
enum { PY_NUM, PY_STR, PY_NAME, PY_LIST, PY_COMP, PY_BIN, PY_UNARY, PY_NOT, PY_BOOL, PY_CMP,
       PY_CALL, PY_INDEX };
enum { PY_ADD, PY_SUB, PY_MUL, PY_DIV, PY_FLOORDIV, PY_MOD, PY_POW, PY_SHL, PY_SHR, PY_BAND,
       PY_BOR, PY_NEG, PY_POS, PY_AND, PY_OR, PY_LT, PY_LE, PY_GT, PY_GE, PY_EQ, PY_NE };

/* A syntax tree node. PY_BIN/UNARY/BOOL: op; PY_CMP: kids[0..n-1] with ops[1..n-1];
 * PY_NAME/CALL/INDEX/COMP/STR: str (name, function, indexed name, loop variable, text);
 * PY_COMP: kids = {item, iterable[, condition]}; col: 0-based column in the source. */
typedef struct py_node {
    int kind, op;
    size_t col;
    int64_t num;
    char *str;
    struct py_node **kids;
    int *ops;
    int nkids;
    int height; /* levels in this subtree (a leaf is 1): bounds every walk's recursion */
} py_node;

/* A value: an integer, a string, or a list of integers (ints) or of strings (strs). */
enum { PY_V_INT = 1, PY_V_STR, PY_V_LIST };
typedef struct py_val {
    int kind;
    int64_t i;
    int64_t *ints;
    char **strs;
    size_t n;
    int is_range; /* a range() not yet passed through list() */
} py_val;

/* Parses src; errors name the construct and its column: "tuple at column 7 in '...'". */
int amk_py_parse(const char *src, py_node **out, amk_diag *d);
void amk_py_free(py_node *n);
/* Resolves a free name to a value: AMK_OK, or AMK_ENOENT when unknown. */
typedef int (*amk_py_lookup)(void *ud, const char *name, py_val *out);
/* Evaluates with Python's semantics on 64-bit integers; '/' must be exact and '**' must
 * have an exponent >= 0 (Python would give a float), results outside 64 bits are errors. */
int amk_py_eval(const py_node *n, const char *src, amk_py_lookup lookup, void *ud, py_val *out,
                amk_diag *d);
void amk_py_val_clear(py_val *v);
/* Emits a name, call or subscript as amk text into sb: AMK_OK, AMK_ENOENT (not handled:
 * names are then errors), or an error with d set. */
typedef int (*amk_py_leaf)(void *ud, const py_node *n, const char *src, amk_sb *sb,
                           amk_diag *d);
/* Translates to amk expression text with the same value on every input where Python's
 * result is an integer ('/' is emitted as amk's '/': callers check it is exact). boolean:
 * only the truth value matters (a condition), so and/or become && / ||. Caller frees *out. */
int amk_py_to_amk(const py_node *n, const char *src, int boolean, amk_py_leaf leaf, void *ud,
                  char **out, amk_diag *d);
int amk_py_may_float(const py_node *n); /* holds '/' or '**' */
void amk_py_names(const py_node *n, void (*cb)(void *ud, const char *name), void *ud);

/* JSON string escaping into a string builder (with quotes). */
void amk__sb_json_string(amk_sb *sb, const char *s);

#endif
