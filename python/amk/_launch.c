/* The per-call path of amk.torch, in C: ctypes marshalling of a cuLaunchKernel costs several
 * microseconds, this costs the driver's own time. Driver reaches the CUDA driver through
 * dlopen (the extension and libamk gain no link dependency on libcuda); a Launcher holds one
 * compiled kernel's launch (grid, block, shared memory, cluster) and its argument block, so
 * that a call only reads the tensors' data pointers, re-encodes a tensor map whose pointer
 * changed, and launches on the stream it is given. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_launch.h"
#include "amk_common.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver's types, laid out as cuda.h declares them (the build needs no CUDA headers). */
typedef int cu_result;

/* A CUtensorMap: 128 bytes; cuda.h 13 aligns it to 128 (12's docs ask 64). */
enum { CU_ATTR_CLUSTER_DIMENSION = 4, TMAP_BYTES = 128, TMAP_ALIGN = 128, TMAP_MAX_RANK = 5 };

typedef struct cu_launch_attr { /* CUlaunchAttribute */
    int id;
    char pad[4];
    union {
        unsigned cluster[3];
        uint64_t align;
        char bytes[64];
    } value;
} cu_launch_attr;

typedef struct cu_launch_config { /* CUlaunchConfig */
    unsigned grid[3], block[3], shared;
    void *stream;
    cu_launch_attr *attrs;
    unsigned nattrs;
} cu_launch_config;

typedef cu_result (*cu_launch_fn)(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                  unsigned by, unsigned bz, unsigned shared, void *stream,
                                  void **params, void **extra);
typedef cu_result (*cu_launch_ex_fn)(const cu_launch_config *cfg, void *fn, void **params,
                                     void **extra);
typedef cu_result (*cu_encode_fn)(void *map, int dtype, uint32_t rank, void *addr,
                                  const uint64_t *dims, const uint64_t *strides,
                                  const uint32_t *box, const uint32_t *elem_strides,
                                  int interleave, int swizzle, int l2_promotion, int oob_fill);
typedef cu_result (*cu_error_fn)(cu_result r, const char **text);

static PyObject *str_data_ptr; /* "data_ptr", interned */

/* Raises Error(message, code, exit_code, step), the message formatted. */
static PyObject *raise_error(int code, int exit_code, const char *step, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return amk__py_raise(msg, code, exit_code, step);
}

/* ---------- Driver: the few entry points a launch needs -------------------------------------- */

typedef struct driver_obj {
    PyObject_HEAD
    void *lib;
    cu_launch_fn launch;
    cu_launch_ex_fn launch_ex; /* NULL before CUDA 11.8: no cluster launches */
    cu_encode_fn encode;       /* NULL before CUDA 12: no tensor maps */
    cu_error_fn error_name, error_string;
} driver_obj;

static void driver_dealloc(driver_obj *d)
{
    if (d->lib)
        dlclose(d->lib);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

/* Driver(path=None): the CUDA driver, libcuda.so.1 unless path names another shared object
 * (the tests' recording fake). Raises Error (exit code 4) when it cannot be loaded or has
 * no cuLaunchKernel. */
static int driver_init(driver_obj *d, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", NULL};
    const char *path = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z", kwlist, &path))
        return -1;
    if (!path)
        path = "libcuda.so.1";
    if (d->lib)
        dlclose(d->lib);
    d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!d->lib) {
        const char *why = dlerror();
        raise_error(AMK_ENODEV, 4, "driver", "the CUDA driver (%s) cannot be loaded: %s", path,
                    why ? why : "?");
        return -1;
    }
    /* POSIX lets dlsym's object pointer become a function pointer. */
    d->launch = (cu_launch_fn)dlsym(d->lib, "cuLaunchKernel");
    d->launch_ex = (cu_launch_ex_fn)dlsym(d->lib, "cuLaunchKernelEx");
    d->encode = (cu_encode_fn)dlsym(d->lib, "cuTensorMapEncodeTiled");
    d->error_name = (cu_error_fn)dlsym(d->lib, "cuGetErrorName");
    d->error_string = (cu_error_fn)dlsym(d->lib, "cuGetErrorString");
    if (!d->launch) {
        raise_error(AMK_ENODEV, 4, "driver", "the CUDA driver (%s) has no cuLaunchKernel", path);
        return -1;
    }
    return 0;
}

/* Raises Error (InternalError, exit code 5) for a failed driver call, naming the driver's
 * error ("CUDA_ERROR_ILLEGAL_ADDRESS") and its text. */
static PyObject *raise_cu(const driver_obj *d, const char *label, const char *call,
                          cu_result r)
{
    const char *name = NULL, *text = NULL;
    if (d->error_name)
        d->error_name(r, &name);
    if (d->error_string)
        d->error_string(r, &text);
    return raise_error(AMK_EBACKEND, 5, "launch", "%s%s%s: %s (%s; CUresult %d)", label,
                       *label ? ": " : "", call, name ? name : "unknown CUDA error",
                       text ? text : "no description", r);
}

static PyTypeObject driver_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "amk._amk.Driver",
    .tp_basicsize = sizeof(driver_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Driver(path=None): the CUDA driver's launch entry points (dlopen)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)driver_init,
    .tp_dealloc = (destructor)driver_dealloc,
};

/* ---------- Launcher: one kernel's launch and argument block --------------------------------- */

typedef struct ptr_arg {
    int arg, tensor;
} ptr_arg;

typedef struct map_arg { /* a CUtensorMap argument: encoded from its tensor's pointer */
    int arg, tensor, dtype, swizzle, l2_promotion;
    uint32_t rank;
    uint64_t dims[TMAP_MAX_RANK], strides[TMAP_MAX_RANK - 1];
    uint32_t box[TMAP_MAX_RANK];
} map_arg;

enum { MAX_TENSORS = 64 }; /* the tensors whose pointers changed are one bit each */

typedef struct launcher_obj {
    PyObject_HEAD
    driver_obj *drv; /* owned reference */
    void *fn;        /* CUfunction */
    unsigned grid[3], block[3], shared;
    int clustered; /* cluster other than 1x1x1: cuLaunchKernelEx with cfg */
    cu_launch_attr attr;
    cu_launch_config cfg;
    int ntensors, nargs, nptrs, nmaps;
    void **argv;                /* nargs: what cuLaunchKernel reads, pointing into the slots */
    uint64_t *slots;            /* nargs 8-byte slots: pointers and scalars */
    unsigned char *maps;        /* nmaps tensor maps of TMAP_BYTES, TMAP_ALIGN-aligned */
    ptr_arg *ptrs;              /* nptrs */
    map_arg *mapd;              /* nmaps */
    uint64_t last[MAX_TENSORS]; /* each tensor's pointer at the last launch */
    int primed;                 /* slots and maps hold last[]'s pointers */
    char label[160];            /* prefixes its error messages */
} launcher_obj;

static void launcher_clear(launcher_obj *L)
{
    Py_CLEAR(L->drv);
    free(L->argv);
    free(L->slots);
    free(L->maps);
    free(L->ptrs);
    free(L->mapd);
    L->argv = NULL;
    L->slots = NULL;
    L->maps = NULL;
    L->ptrs = NULL;
    L->mapd = NULL;
    L->nargs = L->nptrs = L->nmaps = L->primed = 0;
}

static void launcher_dealloc(launcher_obj *L)
{
    launcher_clear(L);
    Py_TYPE(L)->tp_free((PyObject *)L);
}

/* A sequence of n ints (n in [lo, hi]) into out; returns -1 with a Python error otherwise. */
static int u64_list(PyObject *seq, int lo, int hi, uint64_t *out, int *n, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len < lo || len > hi) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: %zd values, expected %d to %d", what, len, lo, hi);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        out[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (out[i] == (uint64_t)-1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    *n = (int)len;
    return 0;
}

static int tensor_index(const launcher_obj *L, long k)
{
    if (k >= 0 && k < L->ntensors)
        return 0;
    PyErr_Format(PyExc_ValueError, "tensor index %ld out of range (%d tensors)", k, L->ntensors);
    return -1;
}

/* One kernel argument from its description (see launcher_init); fills slot i. */
static int parse_arg(launcher_obj *L, int i, PyObject *item)
{
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) < 2) {
        PyErr_Format(PyExc_TypeError, "argument %d: expected a tuple (kind, ...)", i);
        return -1;
    }
    const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
    if (!kind)
        return -1;
    PyObject *v = PyTuple_GET_ITEM(item, 1);
    void *slot = &L->slots[i];
    L->argv[i] = slot;
    if (!strcmp(kind, "ptr")) {
        long k = PyLong_AsLong(v);
        if ((k == -1 && PyErr_Occurred()) || tensor_index(L, k))
            return -1;
        L->ptrs[L->nptrs++] = (ptr_arg){i, (int)k};
        return 0;
    }
    if (!strcmp(kind, "tensor_map")) {
        map_arg *m = &L->mapd[L->nmaps];
        PyObject *dims, *strides, *box;
        int n_dims, n_strides, n_box;
        uint64_t b64[TMAP_MAX_RANK];
        memset(m, 0, sizeof *m);
        m->arg = i;
        if (!PyArg_ParseTuple(item, "siiOOOii", &kind, &m->tensor, &m->dtype, &dims, &strides,
                              &box, &m->swizzle, &m->l2_promotion) ||
            tensor_index(L, m->tensor) ||
            u64_list(dims, 1, TMAP_MAX_RANK, m->dims, &n_dims, "tensor_map dims") ||
            u64_list(strides, n_dims - 1, n_dims - 1, m->strides, &n_strides,
                     "tensor_map strides (rank - 1 values)") ||
            u64_list(box, n_dims, n_dims, b64, &n_box, "tensor_map box (rank values)"))
            return -1;
        m->rank = (uint32_t)n_dims;
        for (int r = 0; r < n_box; r++)
            m->box[r] = (uint32_t)b64[r];
        L->argv[i] = L->maps + (size_t)L->nmaps * TMAP_BYTES;
        L->nmaps++;
        return 0;
    }
    /* a value, passed in its own type */
    if (!strcmp(kind, "f32") || !strcmp(kind, "f64")) {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        if (kind[1] == '3') {
            float f = (float)d;
            memcpy(slot, &f, sizeof f);
        } else
            memcpy(slot, &d, sizeof d);
        return 0;
    }
    if (!strcmp(kind, "u64")) {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred())
            return -1;
        memcpy(slot, &u, sizeof u);
        return 0;
    }
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (!strcmp(kind, "i64"))
        memcpy(slot, &x, sizeof x);
    else if (!strcmp(kind, "i32") || !strcmp(kind, "u32")) {
        if (x < INT32_MIN || x > (long long)UINT32_MAX) {
            PyErr_Format(PyExc_OverflowError, "argument %d: %lld does not fit 32 bits", i, x);
            return -1;
        }
        uint32_t w = (uint32_t)x;
        memcpy(slot, &w, sizeof w);
    } else {
        PyErr_Format(PyExc_ValueError, "argument %d: unknown kind '%s'", i, kind);
        return -1;
    }
    return 0;
}

/* Launcher(driver, function, grid, block, shared, cluster, ntensors, args, label=""):
 * function is the CUfunction (an int); grid, block and cluster are 3 ints each; each launch
 * takes ntensors tensors; args describes the kernel's arguments in order, each one of
 *   ("ptr", k)              tensor k's data pointer
 *   ("i32"|"u32"|"i64"|"u64"|"f32"|"f64", value)
 *   ("tensor_map", k, dtype, dims, strides, box, swizzle, l2_promotion)
 *       a CUtensorMap over tensor k (cuTensorMapEncodeTiled's enum values; element strides
 *       1, no interleave, zero fill).
 * Raises Error (exit code 4) when the driver lacks what the launch needs (cluster launch,
 * tensor maps); ValueError or TypeError for a malformed description. */
static int launcher_init(launcher_obj *L, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"driver", "function", "grid",     "block", "shared",
                             "cluster", "ntensors", "args", "label", NULL};
    PyObject *drv, *fn, *desc;
    unsigned cluster[3];
    const char *label = "";
    launcher_clear(L);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O(III)(III)I(III)iO|s", kwlist, &driver_type,
                                     &drv, &fn, &L->grid[0], &L->grid[1], &L->grid[2],
                                     &L->block[0], &L->block[1], &L->block[2], &L->shared,
                                     &cluster[0], &cluster[1], &cluster[2], &L->ntensors, &desc,
                                     &label))
        return -1;
    snprintf(L->label, sizeof L->label, "%s", label);
    L->fn = PyLong_AsVoidPtr(fn);
    if (!L->fn && PyErr_Occurred())
        return -1;
    if (L->ntensors < 0 || L->ntensors > MAX_TENSORS) {
        PyErr_Format(PyExc_ValueError, "ntensors %d: 0 to %d", L->ntensors, MAX_TENSORS);
        return -1;
    }
    Py_INCREF(drv);
    L->drv = (driver_obj *)drv;
    L->clustered = cluster[0] * cluster[1] * cluster[2] != 1;
    if (L->clustered && !L->drv->launch_ex) {
        raise_error(AMK_EUNSUPPORTED, 4, "driver",
                    "%s: the CUDA driver has no cuLaunchKernelEx (a cluster launch needs 11.8+)",
                    L->label);
        return -1;
    }
    memset(&L->attr, 0, sizeof L->attr);
    L->attr.id = CU_ATTR_CLUSTER_DIMENSION;
    memcpy(L->attr.value.cluster, cluster, sizeof cluster);
    L->cfg = (cu_launch_config){{L->grid[0], L->grid[1], L->grid[2]},
                                {L->block[0], L->block[1], L->block[2]},
                                L->shared, NULL, &L->attr, 1};

    PyObject *fast = PySequence_Fast(desc, "args: expected a sequence of tuples");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int nmaps = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(fast, i);
        if (PyTuple_Check(it) && PyTuple_GET_SIZE(it) > 0 &&
            PyUnicode_Check(PyTuple_GET_ITEM(it, 0)) &&
            !PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(it, 0), "tensor_map"))
            nmaps++;
    }
    if (nmaps && !L->drv->encode) {
        Py_DECREF(fast);
        raise_error(AMK_EUNSUPPORTED, 4, "driver",
                    "%s: the CUDA driver has no cuTensorMapEncodeTiled (tensor maps need 12.0+)",
                    L->label);
        return -1;
    }
    size_t na = n ? (size_t)n : 1;
    L->argv = calloc(na, sizeof *L->argv);
    L->slots = calloc(na, sizeof *L->slots);
    L->ptrs = calloc(na, sizeof *L->ptrs);
    L->mapd = calloc(na, sizeof *L->mapd);
    L->maps = nmaps ? aligned_alloc(TMAP_ALIGN, (size_t)nmaps * TMAP_BYTES) : NULL;
    if (!L->argv || !L->slots || !L->ptrs || !L->mapd || (nmaps && !L->maps)) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    if (nmaps)
        memset(L->maps, 0, (size_t)nmaps * TMAP_BYTES);
    L->nargs = (int)n;
    for (Py_ssize_t i = 0; i < n; i++)
        if (parse_arg(L, (int)i, PySequence_Fast_GET_ITEM(fast, i))) {
            Py_DECREF(fast);
            return -1;
        }
    Py_DECREF(fast);
    return 0;
}

/* A launch argument's address: an int as it is, else the result of its data_ptr(). */
static int data_ptr(PyObject *o, uint64_t *p)
{
    PyObject *v = PyLong_Check(o) ? (Py_INCREF(o), o)
                                  : PyObject_CallMethodObjArgs(o, str_data_ptr, NULL);
    if (!v)
        return -1;
    *p = PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    return *p == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
}

/* Writes the pointers of the tensors in mask (a bit each) into their slots and re-encodes
 * their tensor maps. On a failed encode the next launch starts over (primed = 0). */
static int refill(launcher_obj *L, uint64_t mask)
{
    for (int i = 0; i < L->nptrs; i++)
        if (mask >> L->ptrs[i].tensor & 1)
            L->slots[L->ptrs[i].arg] = L->last[L->ptrs[i].tensor];
    static const uint32_t ones[TMAP_MAX_RANK] = {1, 1, 1, 1, 1};
    for (int i = 0; i < L->nmaps; i++) {
        const map_arg *m = &L->mapd[i];
        if (!(mask >> m->tensor & 1))
            continue;
        cu_result r = L->drv->encode(L->argv[m->arg], m->dtype, m->rank,
                                     (void *)(uintptr_t)L->last[m->tensor], m->dims, m->strides,
                                     m->box, ones, 0, m->swizzle, m->l2_promotion, 0);
        if (r) {
            L->primed = 0;
            raise_cu(L->drv, L->label, "cuTensorMapEncodeTiled", r);
            return -1;
        }
    }
    L->primed = 1;
    return 0;
}

/* launch(stream, t0, ..., tN-1): the kernel on stream (a CUstream as an int; 0: the legacy
 * default stream) over the tensors (ints or objects with data_ptr()). Raises Error (exit
 * code 5) naming the driver's error when the launch or an encode fails. The GIL stays held:
 * it serialises the calls that share the argument block (the driver copies the arguments
 * at the launch, so the block may change right after, even under CUDA graph capture). */
static PyObject *launcher_launch(launcher_obj *L, PyObject *const *a, Py_ssize_t n)
{
    if (n != 1 + L->ntensors) {
        PyErr_Format(PyExc_TypeError, "launch() takes a stream and %d tensors (%zd given)",
                     L->ntensors, n ? n - 1 : 0);
        return NULL;
    }
    if (!L->drv) {
        PyErr_SetString(PyExc_RuntimeError, "Launcher not initialised");
        return NULL;
    }
    void *stream = PyLong_AsVoidPtr(a[0]);
    if (!stream && PyErr_Occurred())
        return NULL;
    uint64_t changed = L->primed ? 0 : ~(uint64_t)0;
    for (int k = 0; k < L->ntensors; k++) {
        uint64_t p;
        if (data_ptr(a[1 + k], &p))
            return NULL;
        if (p != L->last[k]) {
            L->last[k] = p;
            changed |= (uint64_t)1 << k;
        }
    }
    if (changed && refill(L, changed))
        return NULL;
    cu_result r;
    if (L->clustered) {
        L->cfg.stream = stream;
        r = L->drv->launch_ex(&L->cfg, L->fn, L->argv, NULL);
    } else
        r = L->drv->launch(L->fn, L->grid[0], L->grid[1], L->grid[2], L->block[0],
                           L->block[1], L->block[2], L->shared, stream, L->argv, NULL);
    if (r)
        return raise_cu(L->drv, L->label, L->clustered ? "cuLaunchKernelEx" : "cuLaunchKernel",
                        r);
    Py_RETURN_NONE;
}

static PyMethodDef launcher_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launcher_launch, METH_FASTCALL,
     "launch(stream, *tensors): the kernel on stream over the tensors"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject launcher_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "amk._amk.Launcher",
    .tp_basicsize = sizeof(launcher_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Launcher(driver, function, grid, block, shared, cluster, ntensors, args, "
              "label=''): one kernel's launch",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)launcher_init,
    .tp_dealloc = (destructor)launcher_dealloc,
    .tp_methods = launcher_methods,
};

int amk__py_launch_add(PyObject *m)
{
    if (!str_data_ptr && !(str_data_ptr = PyUnicode_InternFromString("data_ptr")))
        return -1;
    if (PyType_Ready(&driver_type) < 0 || PyType_Ready(&launcher_type) < 0)
        return -1;
    Py_INCREF(&driver_type);
    if (PyModule_AddObject(m, "Driver", (PyObject *)&driver_type)) {
        Py_DECREF(&driver_type);
        return -1;
    }
    Py_INCREF(&launcher_type);
    if (PyModule_AddObject(m, "Launcher", (PyObject *)&launcher_type)) {
        Py_DECREF(&launcher_type);
        return -1;
    }
    return 0;
}
