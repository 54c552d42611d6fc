/* A program built against an installed amk (tests/install_consumer.sh): loads the registry of
 * built-in kernels, lists them, and evaluates the default config of one kernel at its default
 * shape with the model backend. Prints "consumer: ok" and exits 0 when all of that works. */
#include <amk_search.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *kernel = argc > 1 ? argv[1] : "gemm";
    amk_diag d;
    amk_registry *reg = NULL;
    amk_space *sp = NULL;
    amk_evaluator *ev = NULL;
    int rc = 1;

    memset(&d, 0, sizeof d);
    if (amk_registry_create(&reg, &d) != AMK_OK) {
        fprintf(stderr, "consumer: registry: %s\n", d.msg);
        return 1;
    }
    printf("consumer: amk %s, %d kernels:", AMK_VERSION, amk_registry_count(reg));
    for (int i = 0; i < amk_registry_count(reg); i++)
        printf(" %s", amk_spec_name(amk_registry_at(reg, i)));
    printf("\n");

    const amk_spec *s = amk_registry_find(reg, kernel);
    if (!s) {
        fprintf(stderr, "consumer: no kernel '%s' among the installed ones\n", kernel);
        goto out;
    }
    amk_shape sh;
    amk_spec_shape(s, 0, &sh);
    amk_backend_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.target = "h100";
    if (amk_evaluator_create("model", &opts, s, &sh, &ev, &d) != AMK_OK) {
        fprintf(stderr, "consumer: evaluator: %s\n", d.msg);
        goto out;
    }
    if (amk_space_create(s, &sh, &amk_evaluator_target(ev)->limits, &sp, &d) != AMK_OK) {
        fprintf(stderr, "consumer: space: %s\n", d.msg);
        goto out;
    }
    amk_config c;
    amk_config_default(s, &sh, &c);
    const amk_config *cfgs[1] = {&c};
    amk_verdict v;
    amk_verdict_init(&v);
    if (amk_evaluator_run(ev, sp, cfgs, 1, NAN, &v) != AMK_OK) {
        fprintf(stderr, "consumer: evaluate: %s\n", v.reason);
        goto out;
    }
    char shape[256];
    amk_shape_format(s, &sh, shape, sizeof shape);
    printf("consumer: %s %s default config %s: %s, %.3f us (%s) on %s\n", kernel, shape,
           v.config_id, amk_status_name(v.status), v.latency_us,
           amk_latency_kind_name(v.latency_kind), amk_evaluator_backend(ev));
    if (v.status != AMK_STATUS_OK || !(v.latency_us > 0)) {
        fprintf(stderr, "consumer: expected an ok verdict with a predicted latency\n");
        goto out;
    }
    printf("consumer: ok\n");
    rc = 0;
out:
    amk_space_free(sp);
    amk_evaluator_free(ev);
    amk_registry_free(reg);
    return rc;
}
