/* libFuzzer target: parse the input as a config against a registry of fixture kernels
 * ($AMK_FUZZ_SPECS, else tests/fixtures/specs/good next to this file). A config that
 * parses must round-trip through its canonical form and its params JSON unchanged, and its
 * defines must be built from declared choices only. */
#define _POSIX_C_SOURCE 200809L /* setenv: fuzz targets are built without _GNU_SOURCE */
#include "amk_space_defs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static amk_registry *reg;

static void load_registry(void)
{
    char path[4096];
    const char *env = getenv("AMK_FUZZ_SPECS");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
#ifdef AMK_TEST_FIXTURES
        snprintf(path, sizeof path, "%s/specs/good", AMK_TEST_FIXTURES);
#else
        /* this file is <root>/fuzz/fuzz_config.c */
        snprintf(path, sizeof path, "%s", __FILE__);
        char *cut = strstr(path, "fuzz/fuzz_config.c");
        if (!cut) {
            fprintf(stderr, "fuzz_config: set AMK_FUZZ_SPECS to a folder of kernel specs\n");
            abort();
        }
        snprintf(cut, sizeof path - (size_t)(cut - path), "tests/fixtures/specs/good");
#endif
    }
    /* the fixtures are the whole registry: half-edited built-ins must not stop the fuzzer */
    setenv("AMK_KERNELS_DIR", path, 1);
    amk_diag d = {0};
    if (amk_registry_create(&reg, &d) || amk_registry_count(reg) == 0) {
        fprintf(stderr, "fuzz_config: %s: %s\n", path, d.msg[0] ? d.msg : "no kernels");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!reg)
        load_registry();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    amk_config c;
    amk_diag d = {0};
    int rc = amk_config_parse(reg, text, &c, &d);
    free(text);
    if (rc != AMK_OK) {
        if (d.code != rc || !d.msg[0])
            abort();
        return 0;
    }
    char *canon = amk_config_canonical(&c);
    amk_config back;
    if (!canon || amk_config_parse(reg, canon, &back, &d) != AMK_OK ||
        !amk_config_equal(&c, &back))
        abort();
    char *p = amk_config_params_json(&c);
    if (!p || amk_config_from_params_json(c.spec, &c.shape, p, &back, &d) != AMK_OK ||
        !amk_config_equal(&c, &back))
        abort();
    char defs[AMK_MAX_PARAMS][96];
    int n = amk_config_defines(&c, defs, AMK_MAX_PARAMS);
    if (n != amk_spec_n_params(c.spec))
        abort();
    for (int i = 0; i < n; i++) {
        char want[96];
        snprintf(want, sizeof want, "-D%s=%lld", amk_spec_param_name(c.spec, i),
                 (long long)amk_spec_param_value(c.spec, i, c.choice[i]));
        if (strcmp(want, defs[i]) || strchr(defs[i], ' '))
            abort();
    }
    (void)amk_config_check(&c, NULL, &d);
    free(canon);
    free(p);
    return 0;
}
