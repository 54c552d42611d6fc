/* The record format's internals, shared by common/record_*.c, results/ (the appender) and
 * the tests: the column table, the tolerant row parser behind amk_row_parse, header-line
 * checks. Not installed. */
#ifndef AMK_RECORD_INT_H
#define AMK_RECORD_INT_H

#include "amk_record.h"

enum {
#define AMK__COL_ENUM(c) AMK__COL_##c,
    AMK_TSV_COLUMNS(AMK__COL_ENUM)
#undef AMK__COL_ENUM
    AMK__TSV_NCOLS
};

/* Column name of index i ("latency_us"); NULL when out of range. */
const char *amk__tsv_column_name(int i);
/* "trial\ttime\t...\tcost_s" (no newline): the current column-name line. */
const char *amk__tsv_column_line(void);
/* The whole current header block: AMK_TSV_HEADER "\n" column line "\n". */
const char *amk__tsv_header_block(void);

/* v1 files (before the observation and peer columns) hold the first 19 columns, v2 files
 * (before the objective and the energy window) the first 31, v3 files (before the trial's
 * cost) the first 34. */
#define AMK__TSV_NCOLS_V1 19
#define AMK__TSV_NCOLS_V2 31
#define AMK__TSV_NCOLS_V3 34

/* The format version (1 to 4) of a file with ncols columns; 0 for no version's count. */
int amk__tsv_version(int ncols);

/* Checks line 1 (the version comment) or line 2 (the column names) of a results file;
 * line excludes its newline. Line 1 sets *ncols to the columns its version has
 * (AMK__TSV_NCOLS_V1, _V2, _V3 or AMK__TSV_NCOLS); line 2 must name exactly *ncols columns.
 * Returns AMK_OK or AMK_ETSV with "PATH:LINE: ..." in d. */
int amk__tsv_check_header_line(const char *path, int lineno, const char *line, size_t len,
                               int *ncols, amk_diag *d);
/* amk_row_format writing the first ncols columns only (a row for a v1 file). */
void amk__row_format_cols(const amk_row *r, int ncols, amk_sb *out);

/* amk_row_parse of a file with ncols columns (v1, v2, v3 or v4), with the torn-row rule: when
 * allow_torn is set, a line with fewer than ncols fields whose complete fields (all but its last) parse is a torn row and
 * AMK__ROW_TORN is returned (r then holds the complete fields only). Any other defect is
 * AMK_ETSV with "column NAME: ..." in d (no file or line: the reader prefixes those). */
#define AMK__ROW_TORN 1
int amk__row_parse(const char *line, size_t len, amk_row *r, int allow_torn, int ncols,
                   amk_diag *d);

/* Checks that a row can be written and read back (enum ranges, config_id form).
 * Returns AMK_OK or AMK_EINVAL naming the column. */
int amk__row_check(const amk_row *r, amk_diag *d);

/* A results file must be a regular file (a FIFO or a device would block or never end):
 * AMK_OK, clearing O_NONBLOCK, or AMK_EIO naming what path is. */
int amk__tsv_regular_fd(int fd, const char *path, amk_diag *d);

#endif
