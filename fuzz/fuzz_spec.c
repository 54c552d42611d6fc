/* libFuzzer target: write the input as DIR/spec.json (DIR also holds a few source files so
 * the loader gets past the file checks) and load it. A spec that loads must then support
 * every read-only operation: default config, canonical form, defines, a space, sampling. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp: fuzz targets are built without _GNU_SOURCE */
#include "amk_space_defs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>

/* amk_space_sample draws from our GSL stream through amk's small rng interface. */
static unsigned long gsl_below(void *rng, unsigned long n)
{
    return gsl_rng_uniform_int(rng, n);
}

static char dir[64];

static void put(const char *name, const void *data, size_t len)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f)
        abort();
    if (len && fwrite(data, 1, len, f) != len)
        abort();
    fclose(f);
}

static void cleanup(void)
{
    static const char *const files[] = {"spec.json", "k.hip", "ref.hip", "tgemm.hip",
                                        "reference.hip", "tiny.hip", "big.hip", NULL};
    for (int i = 0; files[i]; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/amk_fuzz_spec_XXXXXX");
        if (!mkdtemp(dir))
            abort();
        static const char *const srcs[] = {"k.hip", "ref.hip", "tgemm.hip", "reference.hip",
                                           "tiny.hip", "big.hip", NULL};
        for (int i = 0; srcs[i]; i++)
            put(srcs[i], "// fuzz\n", 8);
        atexit(cleanup);
    }
    put("spec.json", data, size);
    amk_spec *s = NULL;
    amk_diag d = {0};
    int rc = amk_spec_load(dir, &s, &d);
    if (rc != AMK_OK) {
        if (s || d.code != rc || !strstr(d.msg, "spec.json"))
            abort();
        return 0;
    }
    amk_config c;
    amk_config_default(s, NULL, &c);
    char *canon = amk_config_canonical(&c);
    if (!canon)
        abort();
    free(canon);
    char defs[AMK_MAX_PARAMS][96];
    if (amk_config_defines(&c, defs, AMK_MAX_PARAMS) != amk_spec_n_params(s))
        abort();
    amk_launch l;
    amk_cost_terms t;
    (void)amk_config_check(&c, NULL, &d);
    (void)amk_config_launch(&c, NULL, &l, &d);
    (void)amk_config_cost(&c, NULL, &t, &d);
    amk_space *sp = NULL;
    if (amk_space_create(s, NULL, NULL, &sp, &d) == AMK_OK) {
        if (amk_space_raw_size(sp) <= 20000)
            (void)amk_space_count(sp);
        gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
        amk_config out, nb[2 * AMK_MAX_PARAMS];
        if (rng && amk_space_sample(sp, &(amk_rng){gsl_below, rng}, &out, 50) == AMK_OK) {
            if (amk_space_valid(sp, &out, NULL) != AMK_OK)
                abort();
            int n = amk_space_neighbours(sp, &out, nb, 2 * AMK_MAX_PARAMS);
            for (int i = 0; i < n; i++)
                if (amk_space_valid(sp, &nb[i], NULL) != AMK_OK)
                    abort();
        }
        gsl_rng_free(rng);
        amk_space_free(sp);
    }
    amk_spec_free(s);
    return 0;
}
