/* The export database's public face: an opaque handle over its JSON tree, so callers speak
 * amk types and text, never cJSON. The work is in export_build/check/lookup/c.c. */
#include "export_int.h"
#include "json_int.h"

#include <stdlib.h>
#include <string.h>

static int wrap(cJSON *root, amk_export_db **out, amk_diag *d)
{
    amk_export_db *db = malloc(sizeof *db);
    if (!db) {
        cJSON_Delete(root);
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    }
    db->root = root;
    *out = db;
    return AMK_OK;
}

int amk_export_db_build(const char *const *paths, size_t n, const amk_export_opts *opts,
                        amk_export_db **out, amk_diag *d)
{
    cJSON *root = NULL;
    int rc = amk__export_build(paths, n, opts, &root, d);
    return rc != AMK_OK ? rc : wrap(root, out, d);
}

int amk_export_db_parse(const char *name, const char *text, size_t len, amk_export_db **out,
                        amk_diag *d)
{
    const char *end = NULL;
    cJSON *root = text ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    /* only white space may follow the document */
    for (size_t off = root ? (size_t)(end - text) : 0; root && off < len; off++)
        if (!text[off] || !strchr(" \t\r\n", text[off])) {
            cJSON_Delete(root);
            root = NULL;
        }
    if (!root)
        return amk_diag_set(d, AMK_EPARSE, "%s: malformed JSON", name ? name : "<json>");
    return wrap(root, out, d);
}

int amk_export_db_read(const char *path, amk_export_db **out, amk_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    cJSON *tree = NULL;
    *out = NULL;
    int e = amk_fs_read_all(path, &text, &len, d);
    /* amk_json_parse is what names the line and column of malformed JSON; the database
     * keeps cJSON's own tree of the text it accepted, as amk_export_db_parse makes it. */
    if (e == AMK_OK)
        e = amk_json_parse(path, text, len, &tree, d);
    cJSON_Delete(tree);
    if (e == AMK_OK)
        e = amk_export_db_parse(path, text, len, out, d);
    free(text);
    return e;
}

void amk_export_db_free(amk_export_db *db)
{
    if (db) {
        cJSON_Delete(db->root);
        free(db);
    }
}

char *amk_export_db_json(const amk_export_db *db)
{
    return cJSON_Print(db->root);
}

int amk_export_db_check(const amk_export_db *db, amk_diag *d)
{
    return amk__export_check(db->root, d);
}

int amk_export_db_c_header(const amk_export_db *db, const char *kernel, amk_sb *out,
                           amk_diag *d)
{
    return amk__export_c(db->root, kernel, out, d);
}

int amk_export_db_lookup(const amk_export_db *db, const char *kernel, const char *device_name,
                         const char *shape, const char *dtype, char **json_out, amk_diag *d)
{
    cJSON *o = NULL;
    int rc = amk__export_lookup(db->root, kernel, device_name, shape, dtype, &o, d);
    if (rc != AMK_OK)
        return rc;
    *json_out = cJSON_Print(o);
    cJSON_Delete(o);
    return *json_out ? AMK_OK : amk_diag_set(d, AMK_ENOMEM, "out of memory");
}
