/* amk._amk's kernel launcher (_launch.c), the per-call path of amk.torch: the types Driver
 * and Launcher, added to the module by _amk.c. */
#ifndef AMK_PY_LAUNCH_H
#define AMK_PY_LAUNCH_H

#include <Python.h>

/* Adds Driver and Launcher to module m. Returns 0, or -1 with a Python exception set. */
int amk__py_launch_add(PyObject *m);
/* Sets amk._amk.Error(msg, code, exit_code, step) (in _amk.c, for both files); NULL. */
PyObject *amk__py_raise(const char *msg, int code, int exit_code, const char *step);

#endif
