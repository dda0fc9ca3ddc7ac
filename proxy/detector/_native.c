/* The learned layer's window scorer in C: Scorer.full / Scorer.short and scoring.windows
 * (proxy/detector/scoring.py), the same floats to the last bit.
 *
 * Exactness: every contribution is the same sequence of double additions as the Python
 * scorer's (a position's unigram weight or 0.0, then its bigram's, then its class key's, then
 * the class pairs with the class one and two back), each key's chain decides as the Python
 * dict `last` does, and the window sums are the same prefix sums and subtractions, the first
 * best window winning ties. Build without -ffast-math and with -ffp-contract=off.
 *
 * Only models whose keys are independent (Scorer.independent: finite weights, no key shared
 * between kinds, no unigram weight of -0.0) and whose weights are all floats are taken: for
 * those one pass over the positions is exact (see Scorer.short). Everything else stays on the
 * Python path.
 *
 * Keys are mapped once, at model load, to small ids: a token to its id by one dict lookup
 * per position; its unigram weight, class and the bigram (id, id) from arrays and a hash table
 * of this module. A chain's last counted position carries the number of the call that set
 * it, so nothing is reset between calls.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t call;  /* the call that set `last`; any other call reads "never counted" */
    Py_ssize_t last;
} Chain;

typedef struct {
    uint64_t key;  /* (first id + 1) << 32 | (second id + 1); 0: empty */
    PyObject *weight;
    double value;
    Chain chain;
} Bigram;

/* A token object's id, by the object's address: the tokens of ascii_tokens are the same
 * objects from call to call (its memo), so most lookups end at the first slot compared. The
 * table holds a reference to each key, so no address is reused while it is in the table. */
typedef struct {
    PyObject *key;
    Py_ssize_t id;  /* -1: not in the vocabulary */
} Seen;

#define SEEN_BITS 14
/* Tokens longer than this (base64, hashes) rarely recur: neither table keeps them. */
#define MEMO_MAX_LEN 24
#define SEEN_CAP (1 << (SEEN_BITS - 1))

typedef struct {
    PyObject_HEAD
    Seen *seen;
    Py_ssize_t n_seen;
    PyObject *vocab;       /* dict: token -> int id */
    Py_ssize_t n_vocab;
    PyObject **uni;        /* per id: its unigram weight (a float) or NULL */
    double *uni_value;
    int *cls;              /* per id: its class index or -1 */
    Chain *uni_chain;
    Py_ssize_t n_classes;
    PyObject **cls_name;   /* per class: the CLASS_OF value (a str) */
    PyObject **cls_w;      /* per class: weight or NULL */
    double *cls_value;
    Chain *cls_chain;
    PyObject **pair_w;     /* per (class, class): weight or NULL */
    double *pair_value;
    Chain *pair_chain;
    Bigram *bigrams;
    size_t bigram_mask;
    int bigram_shift;      /* 64 - log2(capacity) */
    Py_ssize_t span;
    uint64_t calls;
    PyObject *zero;        /* 0.0, what dict.get(key, 0.0) gives for a missing key */
} Model;

static PyObject *fsum;  /* math.fsum */

/* The SHA-256 of this file as the build hook read it (native.py tells a stale build by it). */
#ifndef GATEWATCH_SOURCE_SHA256
#define GATEWATCH_SOURCE_SHA256 ""
#endif

/* Fibonacci hashing: the top bits of the product depend on every bit of the key. */
static inline size_t bigram_hash(const Model *m, uint64_t key) {
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> m->bigram_shift);
}

static Bigram *bigram_find(Model *m, Py_ssize_t a, Py_ssize_t b) {
    uint64_t key = ((uint64_t)(a + 1) << 32) | (uint64_t)(b + 1);
    size_t at = bigram_hash(m, key);
    for (;;) {
        Bigram *slot = &m->bigrams[at];
        if (slot->key == key)
            return slot;
        if (slot->key == 0)
            return NULL;
        at = (at + 1) & m->bigram_mask;
    }
}

static inline Py_ssize_t chain_last(const Chain *c, uint64_t call, Py_ssize_t span) {
    return c->call == call ? c->last : -span;
}

static inline void chain_set(Chain *c, uint64_t call, Py_ssize_t i) {
    c->call = call;
    c->last = i;
}

static void Model_dealloc(Model *m) {
    if (m->seen) {
        for (size_t i = 0; i < ((size_t)1 << SEEN_BITS); i++)
            Py_XDECREF(m->seen[i].key);
        PyMem_Free(m->seen);
    }
    Py_XDECREF(m->vocab);
    if (m->uni) {
        for (Py_ssize_t i = 0; i < m->n_vocab; i++)
            Py_XDECREF(m->uni[i]);
    }
    if (m->cls_name) {
        for (Py_ssize_t c = 0; c < m->n_classes; c++) {
            Py_XDECREF(m->cls_name[c]);
            Py_XDECREF(m->cls_w[c]);
        }
    }
    if (m->pair_w) {
        for (Py_ssize_t c = 0; c < m->n_classes * m->n_classes; c++)
            Py_XDECREF(m->pair_w[c]);
    }
    if (m->bigrams) {
        for (size_t i = 0; i <= m->bigram_mask; i++)
            Py_XDECREF(m->bigrams[i].weight);
    }
    PyMem_Free(m->uni);
    PyMem_Free(m->uni_value);
    PyMem_Free(m->cls);
    PyMem_Free(m->uni_chain);
    PyMem_Free(m->cls_name);
    PyMem_Free(m->cls_w);
    PyMem_Free(m->cls_value);
    PyMem_Free(m->cls_chain);
    PyMem_Free(m->pair_w);
    PyMem_Free(m->pair_value);
    PyMem_Free(m->pair_chain);
    PyMem_Free(m->bigrams);
    Py_XDECREF(m->zero);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

/* The id of token `tok` (an exact str): -1 when it is not in the vocabulary, -2 on error. */
static Py_ssize_t token_id(Model *m, PyObject *tok) {
    size_t mask = ((size_t)1 << SEEN_BITS) - 1;
    size_t at = (size_t)((((uintptr_t)tok >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - SEEN_BITS));
    for (;;) {
        Seen *slot = &m->seen[at];
        if (slot->key == tok)
            return slot->id;
        if (slot->key == NULL)
            break;
        at = (at + 1) & mask;
    }
    Py_ssize_t id = -1;
    PyObject *found = PyDict_GetItemWithError(m->vocab, tok);
    if (found)
        id = PyLong_AsSsize_t(found);
    else if (PyErr_Occurred())
        return -2;
    if (m->n_seen < SEEN_CAP && PyUnicode_GET_LENGTH(tok) <= MEMO_MAX_LEN) {
        Py_INCREF(tok);
        m->seen[at].key = tok;
        m->seen[at].id = id;
        m->n_seen++;
    }
    return id;
}

/* A weight the scorer can take: an exact, finite float. */
static int check_weight(PyObject *w) {
    if (!PyFloat_CheckExact(w) || !isfinite(PyFloat_AS_DOUBLE(w))) {
        PyErr_SetString(PyExc_ValueError, "weights must be finite floats");
        return -1;
    }
    return 0;
}

/* The id of `word` in `ids` (a dict), added with the next id when `add`; -1 when absent. */
static Py_ssize_t word_id(PyObject *ids, PyObject *word, int add) {
    if (!PyUnicode_CheckExact(word)) {
        PyErr_SetString(PyExc_TypeError, "keys must be str");
        return -2;
    }
    PyObject *found = PyDict_GetItemWithError(ids, word);
    if (found)
        return PyLong_AsSsize_t(found);
    if (PyErr_Occurred())
        return -2;
    if (!add)
        return -1;
    Py_ssize_t id = PyDict_GET_SIZE(ids);
    PyObject *value = PyLong_FromSsize_t(id);
    if (!value || PyDict_SetItem(ids, word, value) < 0) {
        Py_XDECREF(value);
        return -2;
    }
    Py_DECREF(value);
    return id;
}

/* A key that is a pair of str: its two parts, or 0 (not a pair: it can never match). */
static int pair_parts(PyObject *key, PyObject **a, PyObject **b) {
    if (!PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) != 2)
        return 0;
    *a = PyTuple_GET_ITEM(key, 0);
    *b = PyTuple_GET_ITEM(key, 1);
    return PyUnicode_CheckExact(*a) && PyUnicode_CheckExact(*b);
}

static int Model_init(Model *m, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"unigrams", "bigrams", "class_of", "classes", "class_pairs",
                             "window", NULL};
    PyObject *uni, *bi, *class_of, *cls_w, *pair_w;
    Py_ssize_t span;
    if (m->vocab) {
        PyErr_SetString(PyExc_TypeError, "Model is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!O!O!n", kwlist, &PyDict_Type, &uni,
                                     &PyDict_Type, &bi, &PyDict_Type, &class_of, &PyDict_Type,
                                     &cls_w, &PyDict_Type, &pair_w, &span))
        return -1;
    if (span < 1) {
        PyErr_SetString(PyExc_ValueError, "window must be at least 1");
        return -1;
    }
    m->span = span;
    m->zero = PyFloat_FromDouble(0.0);
    m->vocab = PyDict_New();
    PyObject *class_ids = PyDict_New();
    PyObject *key, *value;
    Py_ssize_t pos;
    int ok = -1;
    if (!m->zero || !m->vocab || !class_ids)
        goto done;
    /* Ids: every unigram key, every word of a bigram key, every word with a class. */
    pos = 0;
    while (PyDict_Next(uni, &pos, &key, &value))
        if (word_id(m->vocab, key, 1) < -1 || check_weight(value) < 0)
            goto done;
    pos = 0;
    while (PyDict_Next(bi, &pos, &key, &value)) {
        PyObject *a, *b;
        if (check_weight(value) < 0)
            goto done;
        if (pair_parts(key, &a, &b) &&
            (word_id(m->vocab, a, 1) < -1 || word_id(m->vocab, b, 1) < -1))
            goto done;
    }
    pos = 0;
    while (PyDict_Next(class_of, &pos, &key, &value)) {
        if (word_id(m->vocab, key, 1) < -1 || word_id(class_ids, value, 1) < -1)
            goto done;
    }
    m->n_vocab = PyDict_GET_SIZE(m->vocab);
    m->n_classes = PyDict_GET_SIZE(class_ids);
    Py_ssize_t nv = m->n_vocab > 0 ? m->n_vocab : 1;
    Py_ssize_t nc = m->n_classes > 0 ? m->n_classes : 1;
    m->uni = PyMem_Calloc(nv, sizeof(PyObject *));
    m->uni_value = PyMem_Calloc(nv, sizeof(double));
    m->cls = PyMem_Calloc(nv, sizeof(int));
    m->uni_chain = PyMem_Calloc(nv, sizeof(Chain));
    m->cls_name = PyMem_Calloc(nc, sizeof(PyObject *));
    m->cls_w = PyMem_Calloc(nc, sizeof(PyObject *));
    m->cls_value = PyMem_Calloc(nc, sizeof(double));
    m->cls_chain = PyMem_Calloc(nc, sizeof(Chain));
    m->pair_w = PyMem_Calloc(nc * nc, sizeof(PyObject *));
    m->pair_value = PyMem_Calloc(nc * nc, sizeof(double));
    m->pair_chain = PyMem_Calloc(nc * nc, sizeof(Chain));
    size_t capacity = 16;
    m->bigram_shift = 60;
    while (capacity < 2 * (size_t)PyDict_GET_SIZE(bi) + 1) {
        capacity <<= 1;
        m->bigram_shift--;
    }
    m->bigrams = PyMem_Calloc(capacity, sizeof(Bigram));
    m->seen = PyMem_Calloc((size_t)1 << SEEN_BITS, sizeof(Seen));
    m->bigram_mask = capacity - 1;
    if (!m->uni || !m->uni_value || !m->cls || !m->uni_chain || !m->cls_name || !m->cls_w ||
        !m->cls_value || !m->cls_chain || !m->pair_w || !m->pair_value || !m->pair_chain ||
        !m->bigrams || !m->seen) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nv; i++)
        m->cls[i] = -1;
    pos = 0;
    while (PyDict_Next(uni, &pos, &key, &value)) {
        Py_ssize_t id = word_id(m->vocab, key, 0);
        Py_INCREF(value);
        m->uni[id] = value;
        m->uni_value[id] = PyFloat_AS_DOUBLE(value);
    }
    pos = 0;
    while (PyDict_Next(class_of, &pos, &key, &value)) {
        Py_ssize_t id = word_id(m->vocab, key, 0);
        Py_ssize_t c = word_id(class_ids, value, 0);
        m->cls[id] = (int)c;
        if (!m->cls_name[c]) {
            Py_INCREF(value);
            m->cls_name[c] = value;
        }
    }
    pos = 0;
    while (PyDict_Next(cls_w, &pos, &key, &value)) {
        if (check_weight(value) < 0)
            goto done;
        Py_ssize_t c = word_id(class_ids, key, 0);
        if (c < -1)
            goto done;
        if (c >= 0) {  /* a class no word has never fires */
            Py_INCREF(value);
            m->cls_w[c] = value;
            m->cls_value[c] = PyFloat_AS_DOUBLE(value);
        }
    }
    pos = 0;
    while (PyDict_Next(pair_w, &pos, &key, &value)) {
        PyObject *a, *b;
        if (check_weight(value) < 0)
            goto done;
        if (!pair_parts(key, &a, &b))
            continue;
        Py_ssize_t ca = word_id(class_ids, a, 0), cb = word_id(class_ids, b, 0);
        if (ca < -1 || cb < -1)
            goto done;
        if (ca >= 0 && cb >= 0) {
            Py_INCREF(value);
            m->pair_w[ca * m->n_classes + cb] = value;
            m->pair_value[ca * m->n_classes + cb] = PyFloat_AS_DOUBLE(value);
        }
    }
    pos = 0;
    while (PyDict_Next(bi, &pos, &key, &value)) {
        PyObject *a, *b;
        if (!pair_parts(key, &a, &b))
            continue;
        Py_ssize_t ia = word_id(m->vocab, a, 0), ib = word_id(m->vocab, b, 0);
        uint64_t k = ((uint64_t)(ia + 1) << 32) | (uint64_t)(ib + 1);
        size_t at = bigram_hash(m, k);
        while (m->bigrams[at].key != 0 && m->bigrams[at].key != k)
            at = (at + 1) & m->bigram_mask;
        Bigram *slot = &m->bigrams[at];
        slot->key = k;
        Py_INCREF(value);
        Py_XSETREF(slot->weight, value);
        slot->value = PyFloat_AS_DOUBLE(value);
    }
    ok = 0;
done:
    Py_XDECREF(class_ids);
    return ok;
}

/* The best window of contributions c[0..n): (sum, start, length) as scoring.windows gives it,
 * for n > span. 0 with the result set; 1: a sum is not finite (left to the Python path). */
static int best_window(const double *c, Py_ssize_t n, Py_ssize_t span, double *best_out,
                       Py_ssize_t *at_out, Py_ssize_t *length_out) {
    double *prefix = PyMem_Malloc((size_t)(n + 1) * sizeof(double));
    if (!prefix) {
        PyErr_NoMemory();
        return -1;
    }
    prefix[0] = 0.0;
    prefix[1] = c[0];  /* accumulate() starts from the first item itself */
    for (Py_ssize_t k = 1; k < n; k++)
        prefix[k + 1] = prefix[k] + c[k];
    for (Py_ssize_t k = 0; k <= n; k++) {
        if (!isfinite(prefix[k])) {
            PyMem_Free(prefix);
            return 1;
        }
    }
    double best = -INFINITY;
    Py_ssize_t at = 0, length = span;
    const Py_ssize_t sizes[2] = {span / 2, span};
    for (int s = 0; s < 2; s++) {
        Py_ssize_t size = sizes[s];
        /* max() keeps the first of equal sums, and indexOf finds that first one */
        double top = prefix[size] - prefix[0];
        Py_ssize_t where = 0;
        for (Py_ssize_t k = 1; k + size <= n; k++) {
            double sum = prefix[k + size] - prefix[k];
            if (sum > top) {
                top = sum;
                where = k;
            }
        }
        if (top > best) {
            best = top;
            at = where;
            length = size;
        }
    }
    PyMem_Free(prefix);
    *best_out = best;
    *at_out = at;
    *length_out = length;
    return 0;
}

/* (best, contributions) -> the Python result: the best window as a tuple, None for the Python
 * path to decide. `list` is the contributions as a list (fsum reads it for short runs). */
static PyObject *window_result(const double *c, Py_ssize_t n, Py_ssize_t span, PyObject *list) {
    if (n <= span) {
        PyObject *sum = PyObject_CallOneArg(fsum, list);
        if (!sum)
            return NULL;
        return Py_BuildValue("(Nin)", sum, 0, n);
    }
    double best;
    Py_ssize_t at, length;
    int found = best_window(c, n, span, &best, &at, &length);
    if (found < 0)
        return NULL;
    if (found > 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(dnn)", best, at, length);
}

static PyObject *add_skipped(PyObject *set, Py_ssize_t i, int slot) {
    PyObject *item = slot < 0 ? PyLong_FromSsize_t(i) : Py_BuildValue("(ni)", i, slot);
    if (!item)
        return NULL;
    int failed = PySet_Add(set, item);
    Py_DECREF(item);
    return failed ? NULL : set;
}

/* Model.score(toks, keep) -> (best | None, contrib) or, with keep,
 * (best | None, contrib, unigram, pairs, classes, skipped_u, skipped_b, skipped_c). */
static PyObject *Model_score(Model *m, PyObject *args) {
    PyObject *toks;
    int keep;
    if (!m->vocab) {
        PyErr_SetString(PyExc_TypeError, "Model is not initialised");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!p", &PyList_Type, &toks, &keep))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(toks), span = m->span;
    uint64_t call = ++m->calls;
    PyObject *result = NULL, *contrib = NULL, *unigram = NULL, *pairs = NULL, *classes = NULL;
    PyObject *skipped_u = NULL, *skipped_b = NULL, *skipped_c = NULL;
    double *c_of = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int *cls_at = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    contrib = PyList_New(n);
    if (!c_of || !cls_at || !contrib)
        goto fail;
    if (keep) {
        unigram = PyList_New(n);
        pairs = PyList_New(n > 0 ? n - 1 : 0);
        classes = PyList_New(n);
        skipped_u = PySet_New(NULL);
        skipped_b = PySet_New(NULL);
        skipped_c = PySet_New(NULL);
        if (!unigram || !pairs || !classes || !skipped_u || !skipped_b || !skipped_c)
            goto fail;
    }
    Py_ssize_t prev_id = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *tok = PyList_GET_ITEM(toks, i);
        if (!PyUnicode_CheckExact(tok)) {
            PyErr_SetString(PyExc_TypeError, "tokens must be str");
            goto fail;
        }
        Py_ssize_t id = token_id(m, tok);
        if (id < -1)
            goto fail;
        /* its unigram weight, counted once per window when positive */
        PyObject *u_obj = id >= 0 ? m->uni[id] : NULL;
        double c = 0.0;
        if (u_obj) {
            c = m->uni_value[id];
            if (c > 0.0) {
                Chain *ch = &m->uni_chain[id];
                if (i - chain_last(ch, call, span) < span) {
                    c = 0.0;
                    if (keep && !add_skipped(skipped_u, i, -1))
                        goto fail;
                } else {
                    chain_set(ch, call, i);
                }
            }
        }
        if (keep) {
            PyObject *item = u_obj ? u_obj : m->zero;
            Py_INCREF(item);
            PyList_SET_ITEM(unigram, i, item);
        }
        /* the bigram it ends */
        if (i) {
            Bigram *b = (prev_id >= 0 && id >= 0) ? bigram_find(m, prev_id, id) : NULL;
            if (keep) {
                PyObject *item = b ? b->weight : m->zero;
                Py_INCREF(item);
                PyList_SET_ITEM(pairs, i - 1, item);
            }
            if (b) {
                double w = b->value;
                if (w < 0.0) {
                    c += w;
                } else if (w > 0.0) {
                    if (i - chain_last(&b->chain, call, span) >= span) {
                        c += w;
                        chain_set(&b->chain, call, i);
                    } else if (keep && !add_skipped(skipped_b, i, -1)) {
                        goto fail;
                    }
                }
            }
        }
        /* its class, then the pairs with the class one and two back */
        int cls = id >= 0 ? m->cls[id] : -1;
        cls_at[i] = cls;
        if (keep) {
            PyObject *item = cls >= 0 ? m->cls_name[cls] : Py_None;
            Py_INCREF(item);
            PyList_SET_ITEM(classes, i, item);
        }
        if (cls >= 0) {
            if (m->cls_w[cls]) {
                double w = m->cls_value[cls];
                Chain *ch = &m->cls_chain[cls];
                if (w < 0.0 || i - chain_last(ch, call, span) >= span) {
                    c += w;
                    if (w > 0.0)
                        chain_set(ch, call, i);
                } else if (keep && !add_skipped(skipped_c, i, 0)) {
                    goto fail;
                }
            }
            for (int back = 1; back <= 2 && back <= i; back++) {
                int prev = cls_at[i - back];
                if (prev < 0)
                    continue;
                Py_ssize_t k = prev * m->n_classes + cls;
                if (!m->pair_w[k])
                    continue;
                double w = m->pair_value[k];
                Chain *ch = &m->pair_chain[k];
                if (w < 0.0 || i - chain_last(ch, call, span) >= span) {
                    c += w;
                    if (w > 0.0)
                        chain_set(ch, call, i);
                } else if (keep && !add_skipped(skipped_c, i, back)) {
                    goto fail;
                }
            }
        }
        c_of[i] = c;
        /* A contribution of +0.0 or equal to its unigram weight is that float object: the
         * same value (and sign), one allocation fewer. */
        PyObject *item;
        if (c == 0.0 && !signbit(c)) {
            item = m->zero;
            Py_INCREF(item);
        } else if (u_obj && c == m->uni_value[id]) {  /* non-zero: the same bits */
            item = u_obj;
            Py_INCREF(item);
        } else {
            item = PyFloat_FromDouble(c);
            if (!item)
                goto fail;
        }
        PyList_SET_ITEM(contrib, i, item);
        prev_id = id;
    }
    PyObject *best = window_result(c_of, n, span, contrib);
    if (!best)
        goto fail;
    if (keep)
        result = PyTuple_Pack(8, best, contrib, unigram, pairs, classes, skipped_u, skipped_b,
                              skipped_c);
    else
        result = PyTuple_Pack(2, best, contrib);
    Py_DECREF(best);
fail:
    PyMem_Free(c_of);
    PyMem_Free(cls_at);
    Py_XDECREF(contrib);
    Py_XDECREF(unigram);
    Py_XDECREF(pairs);
    Py_XDECREF(classes);
    Py_XDECREF(skipped_u);
    Py_XDECREF(skipped_b);
    Py_XDECREF(skipped_c);
    return result;
}

/* windows(contrib, span) -> (sum, start, length), or None where the Python path decides
 * (an item that is not a float, or a sum that is not finite). */
static PyObject *native_windows(PyObject *self, PyObject *args) {
    PyObject *list;
    Py_ssize_t span;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &list, &span))
        return NULL;
    if (span < 1) {
        PyErr_SetString(PyExc_ValueError, "window must be at least 1");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    double *c = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!c)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (!PyFloat_CheckExact(item)) {
            PyMem_Free(c);
            Py_RETURN_NONE;
        }
        c[i] = PyFloat_AS_DOUBLE(item);
    }
    PyObject *out = window_result(c, n, span, list);
    PyMem_Free(c);
    return out;
}

/* ascii_tokens(text, repair, repair_from, repair_to) -> model.tokens(text) for ASCII text, or
 * None for text that is not ASCII. A word is a run of letters and digits, each run of digits
 * one "0", cut into pieces of 40 characters; a piece of `repair_from` to `repair_to`
 * characters is repair(piece) (lexicon.repair, a pure function that leaves every other length
 * alone), any other piece itself. The answer for each piece of up to MEMO_MAX_LEN characters
 * is kept (up to MEMO_CAP pieces), so a word seen before costs a hash and a compare, and its
 * token is the same str object every time (its hash already computed). Longer pieces (base64,
 * hashes) rarely recur: they would only fill the memo. */
#define MAX_TOKEN 40
#define MEMO_BITS 16
#define MEMO_CAP (1 << (MEMO_BITS - 1))

typedef struct {
    uint64_t hash;
    PyObject *piece;  /* the piece's text (ASCII str) */
    PyObject *token;  /* what it becomes */
} MemoSlot;

static MemoSlot *memo;
static Py_ssize_t memo_used;

static uint64_t piece_hash(const char *piece, int len) {
    uint64_t h = 0xcbf29ce484222325ULL;  /* FNV-1a */
    for (int k = 0; k < len; k++)
        h = (h ^ (unsigned char)piece[k]) * 0x100000001b3ULL;
    return h | 1;  /* 0 marks an empty slot */
}

/* Repairer(class_of, repairs, min_len, max_len): lexicon.repair for ASCII words, with no
 * Python code run and no string made for a variant. `class_of` is lexicon.CLASS_OF (only its
 * keys are read: a word is a class word or not) and `repairs` lexicon's table of class words
 * with one letter missing; a token of min_len - 1 to max_len characters that is not a class
 * word becomes the class word it misspells by one letter, tried in repair()'s order: a letter
 * missing (repairs[token]), then for each letter removed in turn, one extra (the variant is
 * a class word of at least min_len characters) or one changed (repairs[variant]). Keys that
 * are not ASCII can never equal an ASCII word and are left out; a value that is not a str
 * is a TypeError (the caller then keeps the Python function). */
typedef struct {
    uint64_t hash;    /* piece_hash of the key; 0: an empty slot */
    PyObject *key;    /* an ASCII str */
    PyObject *value;  /* what the key repairs to (for a class word: the key itself) */
} WordSlot;

typedef struct {
    WordSlot *slots;
    size_t mask;
} WordTable;

typedef struct {
    PyObject_HEAD
    WordTable words;  /* the class words */
    WordTable fixes;  /* class words with a letter missing -> the class word */
    Py_ssize_t min_len, max_len;
} Repairer;

static void word_table_free(WordTable *t) {
    if (!t->slots)
        return;
    for (size_t i = 0; i <= t->mask; i++) {
        Py_XDECREF(t->slots[i].key);
        Py_XDECREF(t->slots[i].value);
    }
    PyMem_Free(t->slots);
    t->slots = NULL;
}

/* piece_hash's lowest bit is always set: the slot comes from the product's middle bits. */
static inline size_t word_slot(uint64_t h, size_t mask) {
    return (size_t)((h * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

static const WordSlot *word_find(const WordTable *t, const char *word, int len) {
    uint64_t h = piece_hash(word, len);
    size_t at = word_slot(h, t->mask);
    for (;;) {
        const WordSlot *slot = &t->slots[at];
        if (slot->hash == 0)
            return NULL;
        if (slot->hash == h && PyUnicode_GET_LENGTH(slot->key) == len &&
            memcmp(PyUnicode_1BYTE_DATA(slot->key), word, (size_t)len) == 0)
            return slot;
        at = (at + 1) & t->mask;
    }
}

/* The table of `dict`'s ASCII keys; each key's value is itself (`self_valued`) or its value
 * in the dict (None values left out: dict.get() would give None, which repair() reads as
 * absent). */
static int word_table_fill(WordTable *t, PyObject *dict, int self_valued) {
    size_t capacity = 16;
    while (capacity < 2 * (size_t)PyDict_GET_SIZE(dict) + 1)
        capacity <<= 1;
    t->slots = PyMem_Calloc(capacity, sizeof(WordSlot));
    if (!t->slots) {
        PyErr_NoMemory();
        return -1;
    }
    t->mask = capacity - 1;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            PyErr_SetString(PyExc_TypeError, "repair keys must be str");
            return -1;
        }
        if (!self_valued && value == Py_None)
            continue;
        if (!self_valued && !PyUnicode_CheckExact(value)) {
            PyErr_SetString(PyExc_TypeError, "repairs must be str");
            return -1;
        }
        if (!PyUnicode_IS_ASCII(key) || PyUnicode_GET_LENGTH(key) > INT_MAX)
            continue;
        const char *word = (const char *)PyUnicode_1BYTE_DATA(key);
        int len = (int)PyUnicode_GET_LENGTH(key);
        uint64_t h = piece_hash(word, len);
        size_t at = word_slot(h, t->mask);
        while (t->slots[at].hash != 0)  /* dict keys are distinct */
            at = (at + 1) & t->mask;
        PyObject *to = self_valued ? key : value;
        Py_INCREF(key);
        Py_INCREF(to);
        t->slots[at] = (WordSlot){h, key, to};
    }
    return 0;
}

static void Repairer_dealloc(Repairer *r) {
    word_table_free(&r->words);
    word_table_free(&r->fixes);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int Repairer_init(Repairer *r, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"class_of", "repairs", "min_len", "max_len", NULL};
    PyObject *class_of, *repairs;
    if (r->words.slots) {
        PyErr_SetString(PyExc_TypeError, "Repairer is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!nn", kwlist, &PyDict_Type, &class_of,
                                     &PyDict_Type, &repairs, &r->min_len, &r->max_len))
        return -1;
    if (r->max_len > MAX_TOKEN) {  /* a variant is built in a piece's buffer */
        PyErr_SetString(PyExc_ValueError, "max_len is at most a piece's length");
        return -1;
    }
    if (word_table_fill(&r->words, class_of, 1) < 0 || word_table_fill(&r->fixes, repairs, 0) < 0) {
        word_table_free(&r->words);
        word_table_free(&r->fixes);
        return -1;
    }
    return 0;
}

/* repair(word) for the ASCII word[0..len): a new reference to what it becomes, or NULL when
 * it stays as it is (no error is set). */
static PyObject *repaired(const Repairer *r, const char *word, int len) {
    if (len < r->min_len - 1 || len > r->max_len || word_find(&r->words, word, len))
        return NULL;
    const WordSlot *found = word_find(&r->fixes, word, len);
    if (found) {
        Py_INCREF(found->value);
        return found->value;
    }
    char variant[MAX_TOKEN];  /* len <= max_len <= MAX_TOKEN */
    for (int i = 0; i < len; i++) {  /* the letter at i removed */
        memcpy(variant, word, (size_t)i);
        memcpy(variant + i, word + i + 1, (size_t)(len - i - 1));
        if (len - 1 >= r->min_len && (found = word_find(&r->words, variant, len - 1))) {
            Py_INCREF(found->key);  /* the variant itself: the class word it spells */
            return found->key;
        }
        if ((found = word_find(&r->fixes, variant, len - 1))) {
            Py_INCREF(found->value);
            return found->value;
        }
    }
    return NULL;
}

static PyObject *Repairer_call(Repairer *r, PyObject *args, PyObject *kwds) {
    PyObject *token;
    if (!r->words.slots) {
        PyErr_SetString(PyExc_TypeError, "Repairer is not initialised");
        return NULL;
    }
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Repairer takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "U", &token))
        return NULL;
    if (!PyUnicode_IS_ASCII(token)) {
        PyErr_SetString(PyExc_ValueError, "Repairer repairs ASCII words");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(token);
    PyObject *fixed = n <= MAX_TOKEN
        ? repaired(r, (const char *)PyUnicode_1BYTE_DATA(token), (int)n) : NULL;
    if (fixed)
        return fixed;
    Py_INCREF(token);
    return token;
}

static PyTypeObject RepairerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "proxy.detector._native.Repairer",
    .tp_basicsize = sizeof(Repairer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "lexicon.repair for ASCII words, from its tables.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Repairer_init,
    .tp_dealloc = (destructor)Repairer_dealloc,
    .tp_call = (ternaryfunc)Repairer_call,
};

typedef struct {
    PyObject *repair;
    const Repairer *native;  /* `repair` when it is a Repairer: called without Python */
    Py_ssize_t from, to;
} Repair;

/* The memo's slot for `piece`, or NULL with *empty set to the free slot it would take. */
static MemoSlot *memo_find(const char *piece, int len, uint64_t h, size_t *empty) {
    /* FNV-1a's top bits hardly depend on a short piece's last letters: taken as they are,
     * a full memo's words cluster into runs some 30 slots long. Mixed first, about 2. */
    size_t mask = ((size_t)1 << MEMO_BITS) - 1;
    size_t at = (size_t)((h * 0x9E3779B97F4A7C15ULL) >> (64 - MEMO_BITS));
    for (;;) {
        MemoSlot *slot = &memo[at];
        if (slot->hash == 0) {
            *empty = at;
            return NULL;
        }
        if (slot->hash == h && PyUnicode_GET_LENGTH(slot->piece) == len &&
            memcmp(PyUnicode_1BYTE_DATA(slot->piece), piece, (size_t)len) == 0)
            return slot;
        at = (at + 1) & mask;
    }
}

static PyObject *piece_token(const char *piece, int len, const Repair *fix) {
    if (len > MEMO_MAX_LEN) {
        PyObject *word = PyUnicode_FromStringAndSize(piece, len);
        if (!word || len < fix->from || len > fix->to)
            return word;
        PyObject *token = fix->native ? repaired(fix->native, piece, len) : NULL;
        if (fix->native) {
            if (!token)
                return word;
            Py_DECREF(word);
            return token;
        }
        token = PyObject_CallOneArg(fix->repair, word);
        Py_DECREF(word);
        if (token && !PyUnicode_CheckExact(token)) {
            PyErr_SetString(PyExc_TypeError, "repair must give a str");
            Py_CLEAR(token);
        }
        return token;
    }
    uint64_t h = piece_hash(piece, len);
    size_t at;
    MemoSlot *found = memo_find(piece, len, h, &at);
    if (found) {
        Py_INCREF(found->token);
        return found->token;
    }
    PyObject *word = PyUnicode_FromStringAndSize(piece, len);
    if (!word)
        return NULL;
    PyObject *token = word;
    if (len >= fix->from && len <= fix->to && fix->native) {
        token = repaired(fix->native, piece, len);
        if (!token) {
            token = word;
            Py_INCREF(token);
        }
    } else if (len >= fix->from && len <= fix->to) {
        token = PyObject_CallOneArg(fix->repair, word);
        if (!token) {
            Py_DECREF(word);
            return NULL;
        }
        if (!PyUnicode_CheckExact(token)) {
            PyErr_SetString(PyExc_TypeError, "repair must give a str");
            Py_DECREF(word);
            Py_DECREF(token);
            return NULL;
        }
        /* Python code ran: another thread may have added to the memo meanwhile. */
        found = memo_find(piece, len, h, &at);
        if (found) {
            Py_DECREF(word);
            Py_DECREF(token);
            Py_INCREF(found->token);
            return found->token;
        }
    } else {
        Py_INCREF(token);
    }
    if (memo_used < MEMO_CAP) {
        MemoSlot *slot = &memo[at];
        slot->hash = h;
        slot->piece = word;  /* the reference we hold */
        Py_INCREF(token);
        slot->token = token;
        memo_used++;
    } else {
        Py_DECREF(word);
    }
    return token;
}

static int append_token(PyObject *out, const char *piece, int len, const Repair *fix) {
    PyObject *token = piece_token(piece, len, fix);
    if (!token)
        return -1;
    int failed = PyList_Append(out, token);
    Py_DECREF(token);
    return failed;
}

static PyObject *ascii_tokens(PyObject *self, PyObject *args) {
    PyObject *text;
    Repair fix;
    if (!PyArg_ParseTuple(args, "UOnn", &text, &fix.repair, &fix.from, &fix.to))
        return NULL;
    fix.native = Py_IS_TYPE(fix.repair, &RepairerType) && ((Repairer *)fix.repair)->words.slots
        ? (const Repairer *)fix.repair : NULL;
    if (!PyUnicode_IS_ASCII(text))
        Py_RETURN_NONE;
    const unsigned char *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    char piece[MAX_TOKEN];
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && !Py_ISALNUM(s[i]))
            i++;
        int len = 0, in_digits = 0;
        for (; i < n && Py_ISALNUM(s[i]); i++) {
            unsigned char c = s[i];
            if (Py_ISDIGIT(c)) {
                if (in_digits)
                    continue;  /* a run of digits is one "0" */
                in_digits = 1;
                c = '0';
            } else {
                in_digits = 0;
            }
            /* a piece is taken when a 41st character comes (digits folded first) */
            if (len == MAX_TOKEN) {
                if (append_token(out, piece, len, &fix) < 0)
                    goto fail;
                len = 0;
            }
            piece[len++] = (char)c;
        }
        if (len && append_token(out, piece, len, &fix) < 0)
            goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* flat(text) -> " ".join(text.split()): every run of whitespace (str.isspace, as split()
 * has it) one space, none at either end. Two passes: the first finds the result's length and
 * largest character (a str is stored at the smallest width its characters need, and strings
 * of different widths never compare equal), the second writes it. */
static unsigned char is_space_1byte[256];  /* Py_UNICODE_ISSPACE of U+0000..U+00FF */

/* flat() of a one-byte string (ASCII or Latin-1): one pass into a buffer, then a copy. */
static PyObject *flat_1byte(const unsigned char *s, Py_ssize_t n) {
    unsigned char *buf = PyMem_Malloc((size_t)(n > 0 ? n : 1));
    if (!buf)
        return PyErr_NoMemory();
    Py_ssize_t at = 0;
    unsigned char widest = 0;
    int pending = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if (is_space_1byte[ch]) {
            pending = at > 0;
            continue;
        }
        if (pending) {
            buf[at++] = ' ';
            pending = 0;
        }
        buf[at++] = ch;
        widest |= ch;  /* its top bit: some character is beyond ASCII */
    }
    PyObject *out = PyUnicode_New(at, (widest & 0x80) ? 0xff : 0x7f);
    if (out)
        memcpy(PyUnicode_1BYTE_DATA(out), buf, (size_t)at);
    PyMem_Free(buf);
    return out;
}

static PyObject *flat(PyObject *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "text must be str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), length = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        return flat_1byte((const unsigned char *)data, n);
    Py_UCS4 widest = 0;
    int pending = 0;  /* a space is owed before the next word */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(ch)) {
            pending = length > 0;
            continue;
        }
        if (pending) {
            length++;
            pending = 0;
        }
        length++;
        if (ch > widest)
            widest = ch;
    }
    if (length == 0)
        return PyUnicode_New(0, 0);
    if (widest < ' ')
        widest = ' ';  /* below 128 the width is the same: ASCII */
    PyObject *out = PyUnicode_New(length, widest);
    if (!out)
        return NULL;
    int out_kind = PyUnicode_KIND(out);
    void *out_data = PyUnicode_DATA(out);
    Py_ssize_t at = 0;
    pending = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(ch)) {
            pending = at > 0;
            continue;
        }
        if (pending) {
            PyUnicode_WRITE(out_kind, out_data, at++, ' ');
            pending = 0;
        }
        PyUnicode_WRITE(out_kind, out_data, at++, ch);
    }
    return out;
}

/* -- the engine's destination finder (proxy/engine/destinations.py) -------------------------
 *
 * Spans is _extract's bookkeeping (sorted spans, the first finder to claim characters keeps
 * them); its add_dotted and add_channels are _find_dotted's walk over the dots and the '#'
 * finder, adding what they find with the Python path's keys (canonical_ip, _url_key and
 * casefold are called back; a plain bare name's and an ASCII channel's keys are made here).
 * ipv6_runs, url_spans, phone_spans and ibans give the candidate spans of the other finders,
 * which Python keys and adds; contacts is taint's test per span. Every character class is the
 * one Python's regex engine uses on str: \w is Py_UNICODE_ISALNUM or '_', \d
 * Py_UNICODE_ISDECIMAL, \s Py_UNICODE_ISSPACE (str.isalnum, str.isdigit and str.isspace are
 * Py_UNICODE_ISALNUM, _ISDIGIT, _ISSPACE); [A-Za-z0-9] are ASCII. Each is held to its Python
 * path by tests/test_destinations_native.py, on adversarial text of every string width. */

#define RD(i) PyUnicode_READ(kind, data, (i))

/* out.append((a, b)); -1 on error */
static int append_pair(PyObject *out, Py_ssize_t a, Py_ssize_t b) {
    PyObject *item = Py_BuildValue("(nn)", a, b);
    if (!item)
        return -1;
    int rc = PyList_Append(out, item);
    Py_DECREF(item);
    return rc;
}

/* Appends `value` to a growing array of indices (*items, *count, *cap); -1 when out of
 * memory (the array stays the caller's to free). */
static int push_index(Py_ssize_t **items, Py_ssize_t *count, Py_ssize_t *cap, Py_ssize_t value) {
    if (*count == *cap) {
        Py_ssize_t grown_cap = *cap ? *cap * 2 : 64;
        Py_ssize_t *grown = PyMem_Realloc(*items, (size_t)grown_cap * sizeof(Py_ssize_t));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        *items = grown;
        *cap = grown_cap;
    }
    (*items)[(*count)++] = value;
    return 0;
}

static int is_str(PyObject *text, const char *name) {
    if (PyUnicode_Check(text))
        return 1;
    PyErr_Format(PyExc_TypeError, "%s() takes a str", name);
    return 0;
}

static inline int ascii_alpha(Py_UCS4 c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
static inline int ascii_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int ascii_alnum(Py_UCS4 c) { return ascii_alpha(c) || ascii_digit(c); }
static inline int label_char(Py_UCS4 c) { return ascii_alnum(c) || c == '-'; }
static inline int word_char(Py_UCS4 c) { return c == '_' || Py_UNICODE_ISALNUM(c); }
static inline int strip_char(Py_UCS4 c) {  /* .rstrip(".,;:!?") */
    return c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?';
}
static inline int path_char(Py_UCS4 c) {  /* [^\s<>"'`)\]}] */
    return !(c == '<' || c == '>' || c == '"' || c == '\'' || c == '`' || c == ')' ||
             c == ']' || c == '}' || Py_UNICODE_ISSPACE(c));
}

/* _FIRST_DOT_REVERSED: the length of the first label that the dot at `dot` ends (1..63
 * label characters, nothing before them that continues a name, an ASCII letter or digit
 * after the dot), or 0. */
static Py_ssize_t first_label(int kind, const void *data, Py_ssize_t n, Py_ssize_t dot) {
    if (dot + 1 >= n || !ascii_alnum(RD(dot + 1)))
        return 0;
    Py_ssize_t len = 0;
    while (len < 64 && dot - len > 0 && label_char(RD(dot - len - 1)))
        len++;
    if (len == 0 || len > 63)
        return 0;
    if (dot - len > 0) {
        Py_UCS4 before = RD(dot - len - 1);
        if (word_char(before) || before == '@' || before == '.' || before == '/' ||
            before == '-')
            return 0;
    }
    return len;
}

/* _IPV4_RE.match(text, start): where it ends, or -1. */
static Py_ssize_t ipv4_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t start) {
    Py_ssize_t p = start;
    for (int octet = 0; octet < 4; octet++) {
        Py_ssize_t run = 0;
        while (p + run < n && run < 4 && Py_UNICODE_ISDECIMAL(RD(p + run)))
            run++;
        if (run == 0 || run > 3)
            return -1;
        p += run;
        if (octet < 3) {
            if (p >= n || RD(p) != '.')
                return -1;
            p++;
        }
    }
    /* (?![\d.]*\d): no digit in the run of digits and dots that follows */
    for (Py_ssize_t q = p; q < n; q++) {
        Py_UCS4 c = RD(q);
        if (Py_UNICODE_ISDECIMAL(c))
            return -1;
        if (c != '.')
            break;
    }
    return p;
}

/* _HOST_RE.match(text, start): where it ends, or -1; *tld_at and *tld_len locate its last
 * label. Each (label '.') repetition can match only one way (a label runs to the next dot),
 * so the regex's backtracking is: the most repetitions (at most 126) whose last dot is
 * followed by two ASCII letters, the letters taken greedily up to 24. */
static Py_ssize_t host_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t start,
                           Py_ssize_t *tld_at, Py_ssize_t *tld_len) {
    Py_ssize_t after_dot[127];
    int reps = 0;
    Py_ssize_t p = start;
    while (reps < 126) {
        Py_ssize_t len = 0;
        while (p + len < n && len < 64 && label_char(RD(p + len)))
            len++;
        if (len == 0 || len > 63 || p + len >= n || RD(p + len) != '.' ||
            RD(p) == '-' || RD(p + len - 1) == '-')
            break;
        p += len + 1;
        after_dot[++reps] = p;
    }
    for (int k = reps; k >= 1; k--) {
        Py_ssize_t q = after_dot[k], letters = 0;
        while (q + letters < n && letters < 24 && ascii_alpha(RD(q + letters)))
            letters++;
        if (letters < 2)
            continue;
        *tld_at = q;
        *tld_len = letters;
        Py_ssize_t end = q + letters;
        if (end < n && RD(end) == '.')
            end++;
        if (end < n && RD(end) == '/') {
            end++;
            while (end < n && path_char(RD(end)))
                end++;
        }
        return end;
    }
    return -1;
}

/* _extract's span bookkeeping: the spans found so far, sorted by start and never overlapping;
 * `add` keeps a span only when it has a key and overlaps none (the first finder to claim
 * characters keeps them). The Python closures' algorithm (bisect, insert), in C. */
typedef struct {
    Py_ssize_t start, end;
    PyObject *key, *kind;
} Span;

typedef struct {
    PyObject_HEAD
    Span *spans;
    Py_ssize_t n, cap;
} Spans;

static void Spans_dealloc(Spans *self) {
    for (Py_ssize_t i = 0; i < self->n; i++) {
        Py_DECREF(self->spans[i].key);
        Py_DECREF(self->spans[i].kind);
    }
    PyMem_Free(self->spans);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* bisect.bisect_right(starts, start) */
static Py_ssize_t spans_right(const Spans *self, Py_ssize_t start) {
    Py_ssize_t lo = 0, hi = self->n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (start < self->spans[mid].start)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int spans_taken(const Spans *self, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t i = spans_right(self, start) - 1;
    if (i >= 0 && self->spans[i].end > start)
        return 1;
    return i + 1 < self->n && self->spans[i + 1].start < end;
}

static PyObject *Spans_taken(Spans *self, PyObject *args) {
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "nn", &start, &end))
        return NULL;
    return PyBool_FromLong(spans_taken(self, start, end));
}

/* Keeps the span when `key` is truthy and overlaps no kept span; -1 on error. */
static int spans_add(Spans *self, Py_ssize_t start, Py_ssize_t end, PyObject *key,
                     PyObject *kind) {
    int truth = PyObject_IsTrue(key);
    if (truth <= 0 || spans_taken(self, start, end))
        return truth < 0 ? -1 : 0;
    if (self->n == self->cap) {
        Py_ssize_t cap = self->cap ? self->cap * 2 : 64;
        Span *grown = PyMem_Realloc(self->spans, (size_t)cap * sizeof(Span));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        self->spans = grown;
        self->cap = cap;
    }
    Py_ssize_t i = spans_right(self, start);
    memmove(self->spans + i + 1, self->spans + i, (size_t)(self->n - i) * sizeof(Span));
    Py_INCREF(key);
    Py_INCREF(kind);
    self->spans[i] = (Span){start, end, key, kind};
    self->n++;
    return 0;
}

static PyObject *Spans_add(Spans *self, PyObject *args) {
    Py_ssize_t start, end;
    PyObject *key, *kind;
    if (!PyArg_ParseTuple(args, "nnOO", &start, &end, &key, &kind))
        return NULL;
    if (spans_add(self, start, end, key, kind) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Spans_found(Spans *self, PyObject *unused) {
    PyObject *out = PyTuple_New(self->n);
    if (!out)
        return NULL;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        Span *s = &self->spans[i];
        PyObject *item = Py_BuildValue("(OOnn)", s->key, s->kind, s->start, s->end);
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

/* Where a walk's finds go: a Spans object, keyed as the Python path keys them. */
typedef struct {
    Spans *spans;
    PyObject *text, *url_key, *ip_key, *ip_kind, *host_kind, *kind;
} Sink;

/* text[start:end] lower-cased (its casefold: the characters are ASCII). */
static PyObject *ascii_lower(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    PyObject *out = PyUnicode_New(end - start, 127);
    if (!out)
        return NULL;
    Py_UCS1 *to = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        to[i - start] = (Py_UCS1)(c >= 'A' && c <= 'Z' ? c | 32 : c);
    }
    return out;
}

/* _url_key(raw, True) of a bare name with no path, computed here: parse_url reads
 * "http://" + raw with _PLAIN_URL (every name the dot walk finds is plain: ASCII labels, a last
 * label of letters), and the key is the lower-cased host less a leading "www." when more
 * than one dot follows. Names holding "xn--" (punycode to validate) go to _url_key. */
static PyObject *plain_host_key(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    int dots = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == '.')
            dots++;
        if (c == '-' && i >= start + 2 && i + 1 < end && PyUnicode_READ(kind, data, i + 1) == '-' &&
            (PyUnicode_READ(kind, data, i - 1) | 32) == 'n' &&
            (PyUnicode_READ(kind, data, i - 2) | 32) == 'x')
            return NULL;
    }
    if (end - start > 4 && dots > 1 && (PyUnicode_READ(kind, data, start) | 32) == 'w' &&
        (PyUnicode_READ(kind, data, start + 1) | 32) == 'w' &&
        (PyUnicode_READ(kind, data, start + 2) | 32) == 'w' &&
        PyUnicode_READ(kind, data, start + 3) == '.')
        start += 4;
    return ascii_lower(kind, data, start, end);
}

static int sink_key(Sink *sink, Py_ssize_t start, Py_ssize_t end, PyObject *key,
                    PyObject *kind) {
    if (!key)
        return -1;
    int rc = spans_add(sink->spans, start, end, key, kind);
    Py_DECREF(key);
    return rc;
}

/* A dotted find: an IPv4 match keyed by canonical_ip, a host name (when no span holds it)
 * by _url_key(raw, True), which gives (key, kind) or None; a bare plain name (`plain`: no
 * path) by plain_host_key. */
static int dotted_found(Sink *sink, Py_ssize_t start, Py_ssize_t end, int is_ip, int plain) {
    if (!is_ip && spans_taken(sink->spans, start, end))
        return 0;
    if (plain) {
        int kind = PyUnicode_KIND(sink->text);
        PyObject *key = plain_host_key(kind, PyUnicode_DATA(sink->text), start, end);
        if (key || PyErr_Occurred())
            return sink_key(sink, start, end, key, sink->host_kind);
    }
    PyObject *raw = PyUnicode_Substring(sink->text, start, end);
    if (!raw)
        return -1;
    if (is_ip) {
        PyObject *key = PyObject_CallFunctionObjArgs(sink->ip_key, raw, NULL);
        Py_DECREF(raw);
        return sink_key(sink, start, end, key, sink->ip_kind);
    }
    PyObject *found = PyObject_CallFunctionObjArgs(sink->url_key, raw, Py_True, NULL);
    Py_DECREF(raw);
    if (!found)
        return -1;
    int rc = 0;
    if (found != Py_None) {
        if (PyTuple_Check(found) && PyTuple_GET_SIZE(found) == 2) {
            rc = spans_add(sink->spans, start, end, PyTuple_GET_ITEM(found, 0),
                           PyTuple_GET_ITEM(found, 1));
        } else {
            PyErr_SetString(PyExc_TypeError, "url_key must give (key, kind) or None");
            rc = -1;
        }
    }
    Py_DECREF(found);
    return rc;
}

/* _find_dotted's walk: each IPv4 match and each host name that passes _tld_ok and the
 * character after it, in the order the Python path adds them. */
static int walk_dotted(PyObject *text, PyObject *not_tlds, Sink *sink) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t done = 0, dot = 0;
    while (n > 0 && (dot = PyUnicode_FindChar(text, '.', dot, n, 1)) >= 0) {
        Py_ssize_t here = dot++;
        if (here < done)
            continue;
        Py_ssize_t len = first_label(kind, data, n, here);
        if (len == 0)
            continue;
        Py_ssize_t start = here - len;
        if (ascii_digit(RD(here - 1)) && ascii_digit(RD(here + 1))) {
            Py_ssize_t end = ipv4_end(kind, data, n, start);
            if (end >= 0) {
                done = end;
                if (dotted_found(sink, start, end, 1, 0) < 0)
                    return -1;
                continue;
            }
        }
        Py_ssize_t tld_at = 0, tld_len = 0;
        Py_ssize_t end = host_end(kind, data, n, start, &tld_at, &tld_len);
        if (end < 0)
            continue;
        while (end > start && strip_char(RD(end - 1)))
            end--;
        done = end;
        char low[25];
        for (Py_ssize_t i = 0; i < tld_len; i++)
            low[i] = (char)(RD(tld_at + i) | 32);
        PyObject *tld = PyUnicode_FromStringAndSize(low, tld_len);
        if (!tld)
            return -1;
        int listed = PySet_Contains(not_tlds, tld);
        Py_DECREF(tld);
        if (listed < 0)
            return -1;
        if (listed)
            continue;
        if (end < n) {
            Py_UCS4 after = RD(end);
            if (Py_UNICODE_ISALNUM(after) || after == '_' || after == '@')
                continue;
        }
        if (dotted_found(sink, start, end, 0, end == tld_at + tld_len) < 0)
            return -1;
    }
    return dot == -2 ? -1 : 0;
}

static PyObject *Spans_add_dotted(Spans *self, PyObject *args) {
    Sink sink = {.spans = self};
    PyObject *not_tlds;
    if (!PyArg_ParseTuple(args, "UO!OOOO", &sink.text, &PyFrozenSet_Type, &not_tlds,
                          &sink.url_key, &sink.ip_key, &sink.ip_kind, &sink.host_kind))
        return NULL;
    if (walk_dotted(sink.text, not_tlds, &sink) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* The '#' finder: each _CHANNEL_RE match not glued to what is before it, trailing dots
 * stripped, keyed by its casefold. The pattern cannot hold a '#', so every '#' is a
 * candidate. */
static int walk_channels(PyObject *text, Sink *sink) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t at = 0;
    while (n > 0 && (at = PyUnicode_FindChar(text, '#', at, n, 1)) >= 0) {
        Py_ssize_t here = at++;
        if (here + 1 >= n || !ascii_alpha(RD(here + 1)))
            continue;
        Py_ssize_t end = here + 2;
        while (end < n && end - here - 2 < 79) {
            Py_UCS4 c = RD(end);
            if (!(word_char(c) || c == '.' || c == '-'))
                break;
            end++;
        }
        at = end;
        if (here > 0) {
            Py_UCS4 before = RD(here - 1);
            if (Py_UNICODE_ISALNUM(before) || before == '_' || before == '&' || before == '#' ||
                before == '/')
                continue;
        }
        while (RD(end - 1) == '.')
            end--;
        if (!spans_taken(sink->spans, here, end)) {
            int ascii = 1;
            for (Py_ssize_t i = here; i < end && ascii; i++)
                ascii = RD(i) < 128;
            PyObject *key;
            if (ascii) {
                key = ascii_lower(kind, data, here, end);  /* casefold, for ASCII */
            } else {
                PyObject *raw = PyUnicode_Substring(text, here, end);
                if (!raw)
                    return -1;
                key = PyObject_CallMethod(raw, "casefold", NULL);
                Py_DECREF(raw);
            }
            if (sink_key(sink, here, end, key, sink->kind) < 0)
                return -1;
        }
    }
    return at == -2 ? -1 : 0;
}

static PyObject *Spans_add_channels(Spans *self, PyObject *args) {
    Sink sink = {.spans = self};
    if (!PyArg_ParseTuple(args, "UO", &sink.text, &sink.kind))
        return NULL;
    if (walk_channels(sink.text, &sink) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _find_ibans' scan: (start, end) of each [A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){10,30} match,
 * leftmost-first and not overlapping as re2's finditer gives them, that no letter or digit
 * touches on either side. The repetition is deterministic (a space is taken only before a
 * letter or digit), and nothing follows it, so a match is its longest run. */
static inline int upper(Py_UCS4 c) { return c >= 'A' && c <= 'Z'; }

/* Scans are written once for any string width and inlined per width (ALWAYS_INLINE, called
 * with a constant `kind`), so each character read is one load, not a switch on the width. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define BY_WIDTH(impl, text, ...)                                                   \
    switch (PyUnicode_KIND(text)) {                                                  \
    case PyUnicode_1BYTE_KIND:                                                       \
        return impl(PyUnicode_1BYTE_KIND, PyUnicode_DATA(text),                      \
                    PyUnicode_GET_LENGTH(text), __VA_ARGS__);                        \
    case PyUnicode_2BYTE_KIND:                                                       \
        return impl(PyUnicode_2BYTE_KIND, PyUnicode_DATA(text),                      \
                    PyUnicode_GET_LENGTH(text), __VA_ARGS__);                        \
    default:                                                                         \
        return impl(PyUnicode_4BYTE_KIND, PyUnicode_DATA(text),                      \
                    PyUnicode_GET_LENGTH(text), __VA_ARGS__);                        \
    }

ALWAYS_INLINE PyObject *ibans_impl(int kind, const void *data, Py_ssize_t n, int unused) {
    (void)unused;
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    Py_ssize_t s = 0;
    while (s + 14 <= n) {
        /* one branch for the two letters: on base64 each is a coin toss */
        if (!(((Py_UCS4)(RD(s) - 'A') < 26) & ((Py_UCS4)(RD(s + 1) - 'A') < 26)) ||
            !(ascii_digit(RD(s + 2)) && ascii_digit(RD(s + 3)))) {
            s++;
            continue;
        }
        Py_ssize_t end = s + 4;
        int reps = 0;
        while (reps < 30 && end < n) {
            Py_UCS4 c = RD(end);
            if (upper(c) || ascii_digit(c)) {
                end++;
            } else if (c == ' ' && end + 1 < n && (upper(RD(end + 1)) || ascii_digit(RD(end + 1)))) {
                end += 2;
            } else {
                break;
            }
            reps++;
        }
        if (reps < 10) {
            s++;
            continue;
        }
        if (!((s > 0 && Py_UNICODE_ISALNUM(RD(s - 1))) || (end < n && Py_UNICODE_ISALNUM(RD(end))))) {
            if (append_pair(out, s, end) < 0) {
                Py_DECREF(out);
                return NULL;
            }
        }
        s = end;
    }
    return out;
}

static PyObject *ibans(PyObject *self, PyObject *text) {
    if (!is_str(text, "ibans"))
        return NULL;
    BY_WIDTH(ibans_impl, text, 0)
}

/* taint._contacts: for each (key, kind, start, end) found in a text, is it still a contact:
 * the value of a `Label: value` line (value_start(line) at or before it; the line found by
 * bisect over the text's '\n's, as the Python path does) or self-declared (the last
 * character before it, in the 60 before and past trailing whitespace, is one a
 * _SELF_DECLARED match ends with, and declared(text, begin, start) finds one). */
static inline int declared_end(Py_UCS4 c) {
    return c == 's' || c == 'S' || c == 0x17f || c == 't' || c == 'T' || c == 'n' ||
           c == 'N' || c == 'a' || c == 'A' || c == ':';
}

/* bisect.bisect_left(breaks, x) */
static Py_ssize_t breaks_left(const Py_ssize_t *breaks, Py_ssize_t nb, Py_ssize_t x) {
    Py_ssize_t lo = 0, hi = nb;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (breaks[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static PyObject *contacts(PyObject *self, PyObject *args) {
    PyObject *text, *found, *value_start, *declared;
    if (!PyArg_ParseTuple(args, "UO!OO", &text, &PyTuple_Type, &found, &value_start, &declared))
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t nb = 0, cap = 0, at = 0;
    Py_ssize_t *breaks = NULL;
    while (n > 0 && (at = PyUnicode_FindChar(text, '\n', at, n, 1)) >= 0) {
        if (push_index(&breaks, &nb, &cap, at++) < 0) {
            PyMem_Free(breaks);
            return NULL;
        }
    }
    if (at == -2) {
        PyMem_Free(breaks);
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(found);
    PyObject *out = PyList_New(count);
    if (!out) {
        PyMem_Free(breaks);
        return NULL;
    }
    /* The last line read: spans come left to right, so each line is read once. value_start
     * is a pure function of the line, so reading one again would give the same answer. */
    Py_ssize_t last_start = -1, last_end = -1, last_value = -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(found, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 4) {
            PyErr_SetString(PyExc_TypeError, "contacts() takes (key, kind, start, end) tuples");
            goto fail;
        }
        Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 2));
        Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 3));
        if (PyErr_Occurred())
            goto fail;
        if (start < 0 || end < start || end > n) {
            PyErr_SetString(PyExc_ValueError, "contacts(): a span outside the text");
            goto fail;
        }
        Py_ssize_t before = breaks_left(breaks, nb, start) - 1;
        Py_ssize_t line_start = before >= 0 ? breaks[before] + 1 : 0;
        Py_ssize_t after = breaks_left(breaks, nb, end);
        Py_ssize_t line_end = after < nb ? breaks[after] : n;
        if (line_start != last_start || line_end != last_end) {
            PyObject *line = PyUnicode_Substring(text, line_start, line_end);
            if (!line)
                goto fail;
            PyObject *value = PyObject_CallFunctionObjArgs(value_start, line, NULL);
            Py_DECREF(line);
            if (!value)
                goto fail;
            last_value = value == Py_None ? -1 : PyLong_AsSsize_t(value);
            Py_DECREF(value);
            if (last_value == -1 && PyErr_Occurred())
                goto fail;
            last_start = line_start;
            last_end = line_end;
        }
        int contact = last_value >= 0 && last_value <= start - line_start;
        if (!contact) {
            Py_ssize_t begin = start > 60 ? start - 60 : 0, q = start;
            while (q > begin && Py_UNICODE_ISSPACE(RD(q - 1)))
                q--;
            if (q > begin && declared_end(RD(q - 1))) {
                PyObject *match = PyObject_CallFunction(declared, "Onn", text, begin, start);
                if (!match)
                    goto fail;
                contact = match != Py_None;
                Py_DECREF(match);
            }
        }
        PyObject *answer = contact ? Py_True : Py_False;
        Py_INCREF(answer);
        PyList_SET_ITEM(out, i, answer);
    }
    PyMem_Free(breaks);
    return out;
fail:
    PyMem_Free(breaks);
    Py_DECREF(out);
    return NULL;
}

/* _find_ipv6's candidates: (start, end) of each run _ipv6_runs yields, its trailing dots
 * stripped, that holds '::' or exactly seven colons and a digit; what canonical_ip then
 * reads. Text without such a run (the Python path's '::' / _SEVEN_COLONS prefilter) gives
 * none. */
static inline int ipv6_char(Py_UCS4 c) {
    return ascii_digit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f') || c == ':' || c == '.';
}

static PyObject *ipv6_runs(PyObject *self, PyObject *text) {
    if (!is_str(text, "ipv6_runs"))
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    Py_ssize_t colon = n > 0 ? PyUnicode_FindChar(text, ':', 0, n, 1) : -1;
    while (colon >= 0) {
        Py_ssize_t start = colon, end = colon;
        while (start > 0 && colon - start <= 45 && ipv6_char(RD(start - 1)))
            start--;
        while (end < n && ipv6_char(RD(end)))
            end++;
        if (end - start >= 2 && end - start <= 45 && !(start > 0 && word_char(RD(start - 1))) &&
            !(end < n && word_char(RD(end)))) {
            Py_ssize_t stop = end, colons = 0;
            int digit = 0, pair = 0;
            while (stop > start && RD(stop - 1) == '.')
                stop--;
            for (Py_ssize_t i = start; i < stop; i++) {
                Py_UCS4 c = RD(i);
                if (c == ':') {
                    colons++;
                    if (i + 1 < stop && RD(i + 1) == ':')
                        pair = 1;
                } else if (ascii_digit(c)) {
                    digit = 1;
                }
            }
            if ((pair || colons == 7) && digit) {
                if (append_pair(out, start, stop) < 0) {
                    Py_DECREF(out);
                    return NULL;
                }
            }
        }
        colon = end < n ? PyUnicode_FindChar(text, ':', end, n, 1) : -1;
    }
    if (colon == -2) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* _find_urls' candidates: (start, end) of each `scheme://tail` around a "://", the scheme
 * walked back over at most 16 scheme characters to its first letter (at least two
 * characters), the tail a run of [^\s<>"'`)\]}], trailing punctuation stripped. */
static inline int scheme_char(Py_UCS4 c) {
    return ascii_alnum(c) || c == '+' || c == '.' || c == '-';
}

static PyObject *url_spans(PyObject *self, PyObject *text) {
    if (!is_str(text, "url_spans"))
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    Py_ssize_t at = 0;
    while (n > 0 && (at = PyUnicode_FindChar(text, ':', at, n, 1)) >= 0) {
        Py_ssize_t here = at++;
        if (here + 2 >= n || RD(here + 1) != '/' || RD(here + 2) != '/')
            continue;
        at = here + 3;
        Py_ssize_t start = here;
        while (start > 0 && here - start < 16 && scheme_char(RD(start - 1)))
            start--;
        while (start < here && !ascii_alpha(RD(start)))
            start++;
        if (here - start < 2)
            continue;
        Py_ssize_t end = here + 3;
        while (end < n && path_char(RD(end)))
            end++;
        if (end == here + 3)
            continue;
        while (end > start && strip_char(RD(end - 1)))
            end--;
        if (append_pair(out, start, end) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    if (at == -2) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* _find_phones' matches: (start, end) of each _PHONE_RE match at an anchor (a '+' before a
 * digit, a '(' before three digits and ')', three digits before each non-overlapping
 * -\d{3}-\d{4} with no letter or digit before them), anchors left to right, that no letter
 * or digit follows. \d is Py_UNICODE_ISDECIMAL; str.isdigit is Py_UNICODE_ISDIGIT. */
static inline int dec(int kind, const void *data, Py_ssize_t n, Py_ssize_t i) {
    return i < n && Py_UNICODE_ISDECIMAL(RD(i));
}

static inline int phone_char(Py_UCS4 c) {  /* [\d \t().-] */
    return c == ' ' || c == '\t' || c == '(' || c == ')' || c == '.' || c == '-' ||
           Py_UNICODE_ISDECIMAL(c);
}

/* _PHONE_RE.match(text, s): where it ends, or -1. At a '+' only the first alternative can
 * match: the most class characters (6 to 18) that a digit follows. */
static Py_ssize_t phone_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t s) {
    Py_UCS4 c = RD(s);
    if (c == '+') {
        if (!dec(kind, data, n, s + 1))
            return -1;
        Py_ssize_t run = 0;
        while (run < 19 && s + 2 + run < n && phone_char(RD(s + 2 + run)))
            run++;
        for (Py_ssize_t m = run - 1 < 18 ? run - 1 : 18; m >= 6; m--)
            if (dec(kind, data, n, s + 2 + m))
                return s + 3 + m;
        return -1;
    }
    if (c == '(') {
        if (!(dec(kind, data, n, s + 1) && dec(kind, data, n, s + 2) &&
              dec(kind, data, n, s + 3) && s + 4 < n && RD(s + 4) == ')'))
            return -1;
        Py_ssize_t p = s + 5;
        if (p < n && RD(p) == ' ')
            p++;
        if (dec(kind, data, n, p) && dec(kind, data, n, p + 1) && dec(kind, data, n, p + 2) &&
            p + 3 < n && RD(p + 3) == '-' && dec(kind, data, n, p + 4) &&
            dec(kind, data, n, p + 5) && dec(kind, data, n, p + 6) && dec(kind, data, n, p + 7))
            return p + 8;
        return -1;
    }
    for (Py_ssize_t i = 0; i < 12; i++) {
        int dash = i == 3 || i == 7;
        if (dash ? !(s + i < n && RD(s + i) == '-') : !dec(kind, data, n, s + i))
            return -1;
    }
    return s + 12;
}

static int cmp_ssize(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

ALWAYS_INLINE PyObject *phone_spans_impl(int kind, const void *data, Py_ssize_t n, int unused) {
    (void)unused;
    Py_ssize_t count = 0, cap = 0;
    Py_ssize_t *anchors = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = RD(i);
        Py_ssize_t anchor = -1;
        if (c == '+') {
            if (dec(kind, data, n, i + 1))
                anchor = i;
        } else if (c == '(') {
            if (dec(kind, data, n, i + 1) && dec(kind, data, n, i + 2) &&
                dec(kind, data, n, i + 3) && i + 4 < n && RD(i + 4) == ')')
                anchor = i;
        } else if (c == '-') {
            /* -\d{3}-\d{4}, found left to right without overlap (finditer) */
            int match = 1;
            for (Py_ssize_t k = 1; k < 9 && match; k++)
                match = k == 4 ? (i + k < n && RD(i + k) == '-') : dec(kind, data, n, i + k);
            if (match) {
                Py_ssize_t start = i - 3;
                if (start >= 0 && Py_UNICODE_ISDIGIT(RD(start)) &&
                    Py_UNICODE_ISDIGIT(RD(start + 1)) && Py_UNICODE_ISDIGIT(RD(start + 2)) &&
                    (start == 0 || !Py_UNICODE_ISALNUM(RD(start - 1))))
                    anchor = start;
                i += 8;  /* the loop's i++ makes it the match's end */
            }
        }
        if (anchor >= 0 && push_index(&anchors, &count, &cap, anchor) < 0) {
            PyMem_Free(anchors);
            return NULL;
        }
    }
    if (count > 1)
        qsort(anchors, (size_t)count, sizeof(Py_ssize_t), cmp_ssize);
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out && i < count; i++) {
        Py_ssize_t start = anchors[i], end = phone_end(kind, data, n, start);
        if (end < 0 || (end < n && Py_UNICODE_ISALNUM(RD(end))))
            continue;
        if (append_pair(out, start, end) < 0)
            Py_CLEAR(out);
    }
    PyMem_Free(anchors);
    return out;
}

static PyObject *phone_spans(PyObject *self, PyObject *text) {
    if (!is_str(text, "phone_spans"))
        return NULL;
    BY_WIDTH(phone_spans_impl, text, 0)
}

#undef RD

static PyMethodDef Spans_methods[] = {
    {"add", (PyCFunction)Spans_add, METH_VARARGS,
     "add(start, end, key, kind): kept when key is truthy and overlaps no span"},
    {"taken", (PyCFunction)Spans_taken, METH_VARARGS,
     "taken(start, end) -> whether a kept span overlaps it"},
    {"add_dotted", (PyCFunction)Spans_add_dotted, METH_VARARGS,
     "add_dotted(text, not_tlds, url_key, ip_key, ip_kind, host_kind): _find_dotted, adding "
     "here"},
    {"add_channels", (PyCFunction)Spans_add_channels, METH_VARARGS,
     "add_channels(text, kind): the '#' finder, adding here with casefolded keys"},
    {"found", (PyCFunction)Spans_found, METH_NOARGS,
     "found() -> ((key, kind, start, end), ...) left to right"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SpansType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "proxy.detector._native.Spans",
    .tp_basicsize = sizeof(Spans),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "destinations._extract's spans: sorted, never overlapping.",
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)Spans_dealloc,
    .tp_methods = Spans_methods,
};


static PyMethodDef Model_methods[] = {
    {"score", (PyCFunction)Model_score, METH_VARARGS,
     "score(toks, keep) -> (best, contrib[, unigram, pairs, classes, skipped_u, skipped_b, "
     "skipped_c])"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "proxy.detector._native.Model",
    .tp_basicsize = sizeof(Model),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A linear model's keys and weights, mapped for the window scorer.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Model_init,
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_methods = Model_methods,
};

/* --- readers._gates: which of a few short byte strings occur, in one pass ------------- */

#define NEEDLES_MAX 64

/* needles(data, needles) -> int: bit i set where needles[i] (non-empty bytes) occurs in
 * data; one walk over data instead of one search per needle (readers._gates asks ~35).
 * Per position, one bit of a table of byte pairs says whether any needle starts with those
 * two bytes (a one-byte needle with any second byte); only there are the needles that do
 * compared. The tables are kept for the last tuple of needles (the readers pass the same one
 * every time). */
typedef struct {
    PyObject *seq;  /* the tuple the tables are for (a reference held) */
    Py_ssize_t n;
    const char *needle[NEEDLES_MAX];
    Py_ssize_t length[NEEDLES_MAX];
    uint64_t first[256], second[256], single;
    uint8_t pairs[65536 / 8];  /* bit (a | b << 8): some needle starts with byte a, then b */
} NeedleTables;

static NeedleTables *needle_tables;

static int needle_tables_for(PyObject *seq) {
    NeedleTables *t = needle_tables;
    if (t && t->seq == seq)
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    if (n > NEEDLES_MAX) {
        PyErr_SetString(PyExc_ValueError, "needles: at most 64 needles");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, i);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) == 0) {
            PyErr_SetString(PyExc_TypeError, "needles: each needle is non-empty bytes");
            return -1;
        }
    }
    if (!t && !(t = needle_tables = PyMem_Calloc(1, sizeof(NeedleTables)))) {
        PyErr_NoMemory();
        return -1;
    }
    Py_XDECREF(t->seq);
    memset(t, 0, sizeof(NeedleTables));
    Py_INCREF(seq);  /* its bytes are the needles the tables point into */
    t->seq = seq;
    t->n = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, i);
        uint64_t bit = (uint64_t)1 << i;
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(item);
        t->needle[i] = (const char *)text;
        t->length[i] = PyBytes_GET_SIZE(item);
        t->first[text[0]] |= bit;
        if (t->length[i] == 1) {
            t->single |= bit;
            for (int ch = 0; ch < 256; ch++) {
                t->second[ch] |= bit;
                unsigned pair = text[0] | (unsigned)ch << 8;
                t->pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
            }
        } else {
            t->second[text[1]] |= bit;
            unsigned pair = text[0] | (unsigned)text[1] << 8;
            t->pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
        }
    }
    return 0;
}

/* Which of the needles in `open` occur at s[at...]. */
static inline uint64_t needles_at(const NeedleTables *t, const unsigned char *s, Py_ssize_t size,
                                  Py_ssize_t at, uint64_t open) {
    uint64_t found = 0;
    while (open) {
        int i = __builtin_ctzll(open);
        open &= open - 1;
        if (size - at >= t->length[i] && memcmp(s + at, t->needle[i], (size_t)t->length[i]) == 0)
            found |= (uint64_t)1 << i;
    }
    return found;
}

static PyObject *needles(PyObject *self, PyObject *args) {
    Py_buffer data;
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "y*O!", &data, &PyTuple_Type, &seq))
        return NULL;
    if (needle_tables_for(seq) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    const NeedleTables *t = needle_tables;
    const unsigned char *s = data.buf;
    Py_ssize_t size = data.len, n = t->n;
    uint64_t all = n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1), found = 0;
    for (Py_ssize_t at = 0; at + 1 < size; at++) {
        unsigned pair = s[at] | (unsigned)s[at + 1] << 8;
        if (!((t->pairs[pair >> 3] >> (pair & 7)) & 1))
            continue;
        found |= needles_at(t, s, size, at, t->first[s[at]] & t->second[s[at + 1]] & ~found);
        if (found == all)
            break;
    }
    if (size > 0 && found != all)  /* the last byte: only a one-byte needle fits */
        found |= needles_at(t, s, size, size - 1, t->first[s[size - 1]] & t->single & ~found);
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLongLong(found);
}

static PyMethodDef module_methods[] = {
    {"flat", flat, METH_O, "flat(text) -> ' '.join(text.split())"},
    {"ascii_tokens", ascii_tokens, METH_VARARGS,
     "ascii_tokens(text, repair, repair_from, repair_to) -> model.tokens(text) for ASCII "
     "text, or None"},
    {"windows", native_windows, METH_VARARGS,
     "windows(contrib, span) -> (sum, start, length) or None"},
    {"ibans", ibans, METH_O,
     "ibans(text) -> [(start, end)]: destinations._find_ibans' spans"},
    {"contacts", contacts, METH_VARARGS,
     "contacts(text, found, value_start, declared) -> [bool]: taint._contacts"},
    {"ipv6_runs", ipv6_runs, METH_O,
     "ipv6_runs(text) -> [(start, end)]: destinations._find_ipv6's candidates"},
    {"phone_spans", phone_spans, METH_O,
     "phone_spans(text) -> [(start, end)]: destinations._find_phones' matches"},
    {"url_spans", url_spans, METH_O,
     "url_spans(text) -> [(start, end)]: destinations._find_urls' candidates"},
    {"needles", needles, METH_VARARGS,
     "needles(data, needles) -> int: bit i set where needles[i] occurs in data"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The detector's hot loops in C (see scoring.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *math = PyImport_ImportModule("math");
    if (!math)
        return NULL;
    fsum = PyObject_GetAttrString(math, "fsum");
    Py_DECREF(math);
    if (!fsum || PyType_Ready(&ModelType) < 0 || PyType_Ready(&SpansType) < 0 ||
        PyType_Ready(&RepairerType) < 0)
        return NULL;
    for (int ch = 0; ch < 256; ch++)
        is_space_1byte[ch] = Py_UNICODE_ISSPACE((Py_UCS4)ch) ? 1 : 0;
    memo = PyMem_Calloc((size_t)1 << MEMO_BITS, sizeof(MemoSlot));
    if (!memo)
        return PyErr_NoMemory();
    PyObject *mod = PyModule_Create(&module);
    if (!mod)
        return NULL;
    if (PyModule_AddStringConstant(mod, "SOURCE_SHA256", GATEWATCH_SOURCE_SHA256) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&ModelType);
    if (PyModule_AddObject(mod, "Model", (PyObject *)&ModelType) < 0) {
        Py_DECREF(&ModelType);
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&RepairerType);
    if (PyModule_AddObject(mod, "Repairer", (PyObject *)&RepairerType) < 0) {
        Py_DECREF(&RepairerType);
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&SpansType);
    if (PyModule_AddObject(mod, "Spans", (PyObject *)&SpansType) < 0) {
        Py_DECREF(&SpansType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
