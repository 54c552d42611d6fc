/* amk._amk's kernel launcher (_launch.c), the per-call path of amk.torch: the types Driver
 * and Launcher, added to the module by _amk.c. */
#ifndef AMK_PY_LAUNCH_H
#define AMK_PY_LAUNCH_H

#include <Python.h>

/* Adds Driver and Launcher to module m; their failures raise error (amk._amk.Error).
 * Returns 0, or -1 with a Python exception set. */
int amk__py_launch_add(PyObject *m, PyObject *error);

#endif
