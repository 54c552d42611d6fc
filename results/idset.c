/* amk_idset: a set of config ids. Ids are 16 hex digits, stored as their 64-bit value in an
 * open-addressing table (linear probing, power-of-two capacity, at most half full). Zero
 * marks an empty slot, so the id 0000000000000000 is kept in a flag beside the table. */
#include "results_int.h"

#include <stdlib.h>

struct amk_idset {
    uint64_t *slots;
    size_t cap; /* power of two */
    size_t n;   /* nonzero ids in slots */
    int has_zero;
};

/* splitmix64's finalizer: config ids are FNV hashes already, but ids typed by hand or
 * counted up in tests are not, and linear probing needs spread-out low bits. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

int amk__id_parse(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s)
        return AMK_EPARSE;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        unsigned digit;
        if (c >= '0' && c <= '9')
            digit = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = (unsigned)(c - 'A' + 10);
        else
            return AMK_EPARSE; /* also catches a NUL before 16 digits */
        v = (v << 4) | digit;
    }
    if (s[16] != '\0')
        return AMK_EPARSE;
    *out = v;
    return AMK_OK;
}

amk_idset *amk_idset_create(void)
{
    amk_idset *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cap = 64;
    s->slots = calloc(s->cap, sizeof *s->slots);
    if (!s->slots) {
        free(s);
        return NULL;
    }
    return s;
}

void amk_idset_free(amk_idset *s)
{
    if (!s)
        return;
    free(s->slots);
    free(s);
}

static size_t probe(const uint64_t *slots, size_t cap, uint64_t id)
{
    size_t mask = cap - 1, i = (size_t)mix(id) & mask;
    while (slots[i] != 0 && slots[i] != id)
        i = (i + 1) & mask;
    return i;
}

static int grow(amk_idset *s)
{
    size_t cap = s->cap * 2;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return AMK_ENOMEM;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i])
            slots[probe(slots, cap, s->slots[i])] = s->slots[i];
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return AMK_OK;
}

int amk__idset_add_u64(amk_idset *s, uint64_t id)
{
    if (id == 0) {
        int added = !s->has_zero;
        s->has_zero = 1;
        return added;
    }
    size_t i = probe(s->slots, s->cap, id);
    if (s->slots[i] == id)
        return 0;
    if ((s->n + 1) * 2 > s->cap) {
        if (grow(s) != AMK_OK)
            return AMK_ENOMEM;
        i = probe(s->slots, s->cap, id);
    }
    s->slots[i] = id;
    s->n++;
    return 1;
}

int amk__idset_has_u64(const amk_idset *s, uint64_t id)
{
    if (!s)
        return 0;
    if (id == 0)
        return s->has_zero;
    return s->slots[probe(s->slots, s->cap, id)] == id;
}

int amk_idset_add(amk_idset *s, const char *config_id)
{
    uint64_t id;
    if (!s || amk__id_parse(config_id, &id) != AMK_OK)
        return AMK_EINVAL;
    return amk__idset_add_u64(s, id);
}

int amk_idset_has(const amk_idset *s, const char *config_id)
{
    uint64_t id;
    if (!s || amk__id_parse(config_id, &id) != AMK_OK)
        return 0;
    return amk__idset_has_u64(s, id);
}

size_t amk_idset_size(const amk_idset *s)
{
    return s ? s->n + (size_t)s->has_zero : 0;
}
