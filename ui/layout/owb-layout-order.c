/* owb-layout-order.c: crossing reduction for the layered layout: an initial order by depth-first
 * search, barycenter sweeps down and up that keep the best order seen, adjacent exchanges on
 * small ranks, and an O(E log V) crossing count. */
#include "owb-layout-private.h"

#include <stdlib.h>
#include <string.h>

/* Adjacent exchange costs about the square of a rank's width per round, so only small ranks
 * (most ranks of a network: a block is a few nodes wide) get it. */
#define TRANSPOSE_MAX_WIDTH 48
#define TRANSPOSE_ROUNDS 4

static int
compare_uint (const void *a, const void *b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return (x > y) - (x < y);
}

static void
sort_uint (guint *a, guint n)
{
  if (n > 16)
    {
      qsort (a, n, sizeof (guint), compare_uint);
      return;
    }
  for (guint i = 1; i < n; i++)
    {
      guint v = a[i], j = i;
      for (; j > 0 && a[j - 1] > v; j--)
        a[j] = a[j - 1];
      a[j] = v;
    }
}

static guint
layer_size (const OwbLayoutWork *w, guint r)
{
  return w->layer_start[r + 1] - w->layer_start[r];
}

static void
update_pos (OwbLayoutWork *w)
{
  for (guint r = 0; r < w->n_ranks; r++)
    for (guint i = w->layer_start[r]; i < w->layer_start[r + 1]; i++)
      w->pos[w->order[i]] = i - w->layer_start[r];
}

/* Crossings between rank r and r + 1 (Barth, Jünger, Mutzel: "Simple and efficient bilayer cross
 * counting"): walk the segments sorted by (upper position, lower position) and count, with an
 * accumulator tree over the lower rank, the earlier segments that end right of each one.
 * `tree` holds 2 × the next power of two of the widest rank; `south` as many entries as segments. */
static guint64
count_pair (const OwbLayoutWork *w, guint r, guint *tree, guint *south)
{
  guint q = layer_size (w, r + 1);
  guint first = 1;
  while (first < q)
    first *= 2;
  memset (tree, 0, sizeof (guint) * (2 * first - 1));
  first -= 1;
  guint64 crossings = 0;
  for (guint i = w->layer_start[r]; i < w->layer_start[r + 1]; i++)
    {
      guint u = w->order[i];
      guint n = 0;
      for (guint k = w->out_start[u]; k < w->out_start[u + 1]; k++)
        south[n++] = w->pos[w->out_node[k]];
      sort_uint (south, n);
      for (guint k = 0; k < n; k++)
        {
          guint index = south[k] + first;
          tree[index]++;
          while (index > 0)
            {
              if (index % 2)
                crossings += tree[index + 1];
              index = (index - 1) / 2;
              tree[index]++;
            }
        }
    }
  return crossings;
}

typedef struct
{
  guint *tree;
  guint *south;
} CountBuffers;

static void
count_buffers_init (CountBuffers *b, const OwbLayoutWork *w)
{
  guint widest = 1, max_deg = 1;
  for (guint r = 0; r < w->n_ranks; r++)
    widest = MAX (widest, layer_size (w, r));
  for (guint v = 0; v < w->n_nodes; v++)
    max_deg = MAX (max_deg, w->out_start[v + 1] - w->out_start[v]);
  guint p = 1;
  while (p < widest)
    p *= 2;
  b->tree = g_new (guint, 2 * p);
  b->south = g_new (guint, max_deg);
}

static void
count_buffers_clear (CountBuffers *b)
{
  g_clear_pointer (&b->tree, g_free);
  g_clear_pointer (&b->south, g_free);
}

/* All crossings; per pair of ranks (r, r + 1) into pairs[r] too, when given. */
static guint64
count_all (const OwbLayoutWork *w, CountBuffers *b, guint64 *pairs)
{
  guint64 total = 0;
  for (guint r = 0; r + 1 < w->n_ranks; r++)
    {
      guint64 c = count_pair (w, r, b->tree, b->south);
      if (pairs)
        pairs[r] = c;
      total += c;
    }
  return total;
}

guint64
_owb_layout_count_crossings (const OwbLayoutWork *w)
{
  CountBuffers b;
  count_buffers_init (&b, w);
  guint64 total = count_all (w, &b, NULL);
  count_buffers_clear (&b);
  return total;
}

/* Initial order: depth-first from the sources in index order, each node appended to its rank when
 * first reached. A tree comes out without crossings, and a block of a network stays together. */
static void
initial_order (OwbLayoutWork *w)
{
  guint n = w->n_nodes;
  w->layer_start = g_new0 (guint, w->n_ranks + 1);
  for (guint v = 0; v < n; v++)
    w->layer_start[w->rank[v] + 1]++;
  for (guint r = 0; r < w->n_ranks; r++)
    w->layer_start[r + 1] += w->layer_start[r];
  w->order = g_new (guint, MAX (n, 1));
  w->pos = g_new (guint, MAX (n, 1));
  g_autofree guint *fill = g_memdup2 (w->layer_start, sizeof (guint) * (w->n_ranks + 1));
  g_autofree gboolean *seen = g_new0 (gboolean, MAX (n, 1));
  g_autofree guint *stack = g_new (guint, MAX (n, 1));
  g_autofree guint *next = g_new (guint, MAX (n, 1));
  for (guint pass = 0; pass < 2; pass++)
    for (guint s = 0; s < n; s++)
      {
        /* Every node is reached from a source; the second pass is a guard, not a path. */
        if (seen[s] || (pass == 0 && w->in_start[s + 1] != w->in_start[s]))
          continue;
        guint top = 0;
        stack[top++] = s;
        seen[s] = TRUE;
        next[s] = w->out_start[s];
        w->order[fill[w->rank[s]]++] = s;
        while (top > 0)
          {
            guint u = stack[top - 1];
            if (next[u] == w->out_start[u + 1])
              {
                top--;
                continue;
              }
            guint v = w->out_node[next[u]++];
            if (seen[v])
              continue;
            seen[v] = TRUE;
            next[v] = w->out_start[v];
            w->order[fill[w->rank[v]]++] = v;
            stack[top++] = v;
          }
      }
  update_pos (w);
}

typedef struct
{
  double key;
  guint pos;
  guint node;
} Keyed;

static int
compare_keyed (const void *a, const void *b)
{
  const Keyed *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Reorders rank r by the barycenter of each node's neighbours in the rank above (down) or below
 * (up). Nodes with no such neighbour keep their place; ties keep the current order. */
static void
sweep_layer (OwbLayoutWork *w, guint r, gboolean down, Keyed *items, guint *slots)
{
  const guint *start = down ? w->in_start : w->out_start;
  const guint *adj = down ? w->in_node : w->out_node;
  guint base = w->layer_start[r], m = layer_size (w, r);
  guint n_items = 0;
  for (guint i = 0; i < m; i++)
    {
      guint v = w->order[base + i];
      guint deg = start[v + 1] - start[v];
      slots[i] = deg > 0;
      if (deg == 0)
        continue;
      double sum = 0;
      for (guint k = start[v]; k < start[v + 1]; k++)
        sum += w->pos[adj[k]];
      items[n_items++] = (Keyed){ sum / deg, i, v };
    }
  qsort (items, n_items, sizeof (Keyed), compare_keyed);
  guint next = 0;
  for (guint i = 0; i < m; i++)
    if (slots[i])
      {
        w->order[base + i] = items[next++].node;
        w->pos[w->order[base + i]] = i;
      }
}

/* Pairs (a, b), a from A and b from B, both sorted, with a > b: the crossings between the
 * segments of two neighbouring nodes u (ends A) left of v (ends B). */
static guint64
cross_sorted (const guint *a, guint na, const guint *b, guint nb)
{
  guint64 c = 0;
  guint j = 0;
  for (guint i = 0; i < na; i++)
    {
      while (j < nb && b[j] < a[i])
        j++;
      c += j;
    }
  return c;
}

/* Adjacent exchange on one small rank: swap neighbours while that removes crossings with the
 * ranks above and below. Returns whether anything moved. */
static gboolean
transpose_layer (OwbLayoutWork *w, guint r, guint *buf)
{
  guint base = w->layer_start[r], m = layer_size (w, r);
  if (m < 2)
    return FALSE;
  /* Sorted neighbour positions of each slot, above then below; they move with their node. */
  guint len = 0;
  guint offs[TRANSPOSE_MAX_WIDTH][3]; /* start of above, start of below, end */
  for (guint i = 0; i < m; i++)
    {
      guint v = w->order[base + i];
      offs[i][0] = len;
      for (guint k = w->in_start[v]; k < w->in_start[v + 1]; k++)
        buf[len++] = w->pos[w->in_node[k]];
      offs[i][1] = len;
      for (guint k = w->out_start[v]; k < w->out_start[v + 1]; k++)
        buf[len++] = w->pos[w->out_node[k]];
      offs[i][2] = len;
      sort_uint (buf + offs[i][0], offs[i][1] - offs[i][0]);
      sort_uint (buf + offs[i][1], offs[i][2] - offs[i][1]);
    }
  const guint *d = buf;
  gboolean moved = FALSE, improved = TRUE;
  for (guint round = 0; improved && round < m; round++)
    {
      improved = FALSE;
      for (guint i = 0; i + 1 < m; i++)
        {
          const guint *a = offs[i], *b = offs[i + 1];
          guint64 keep = cross_sorted (d + a[0], a[1] - a[0], d + b[0], b[1] - b[0])
                         + cross_sorted (d + a[1], a[2] - a[1], d + b[1], b[2] - b[1]);
          guint64 swap = cross_sorted (d + b[0], b[1] - b[0], d + a[0], a[1] - a[0])
                         + cross_sorted (d + b[1], b[2] - b[1], d + a[1], a[2] - a[1]);
          if (swap >= keep)
            continue;
          guint t[3];
          memcpy (t, offs[i], sizeof t);
          memcpy (offs[i], offs[i + 1], sizeof t);
          memcpy (offs[i + 1], t, sizeof t);
          guint tv = w->order[base + i];
          w->order[base + i] = w->order[base + i + 1];
          w->order[base + i + 1] = tv;
          improved = moved = TRUE;
        }
    }
  if (moved)
    for (guint i = 0; i < m; i++)
      w->pos[w->order[base + i]] = i;
  return moved;
}

/* Adjacent exchange on the small ranks that touch a crossing (in a network most ranks touch
 * none), keeping the per-pair counts up to date. */
static void
transpose_all (OwbLayoutWork *w, guint *buf, guint64 *pairs, CountBuffers *cb)
{
  for (guint round = 0; round < TRANSPOSE_ROUNDS; round++)
    {
      gboolean moved = FALSE;
      for (guint r = 0; r < w->n_ranks; r++)
        {
          guint64 around = (r > 0 ? pairs[r - 1] : 0) + (r + 1 < w->n_ranks ? pairs[r] : 0);
          if (around == 0 || layer_size (w, r) > TRANSPOSE_MAX_WIDTH || !transpose_layer (w, r, buf))
            continue;
          moved = TRUE;
          if (r > 0)
            pairs[r - 1] = count_pair (w, r - 1, cb->tree, cb->south);
          if (r + 1 < w->n_ranks)
            pairs[r] = count_pair (w, r, cb->tree, cb->south);
        }
      if (!moved)
        break;
    }
}

gboolean
_owb_layout_order (OwbLayoutWork *w, guint sweeps, GCancellable *cancellable)
{
  initial_order (w);
  if (w->n_ranks < 2 || sweeps == 0)
    return TRUE;

  CountBuffers cb;
  count_buffers_init (&cb, w);
  guint widest = 1;
  for (guint r = 0; r < w->n_ranks; r++)
    widest = MAX (widest, layer_size (w, r));
  g_autofree Keyed *items = g_new (Keyed, widest);
  g_autofree guint *slots = g_new (guint, widest);
  /* Room for the neighbour positions of a whole rank, for the adjacent exchange. */
  guint most = 0;
  for (guint r = 0; r < w->n_ranks; r++)
    {
      guint sum = 0;
      for (guint i = w->layer_start[r]; i < w->layer_start[r + 1]; i++)
        {
          guint v = w->order[i];
          sum += w->in_start[v + 1] - w->in_start[v] + w->out_start[v + 1] - w->out_start[v];
        }
      most = MAX (most, sum);
    }
  g_autofree guint *buf = g_new (guint, MAX (most, 1));
  g_autofree guint64 *pairs = g_new0 (guint64, w->n_ranks);
  g_autofree guint *best = g_memdup2 (w->order, sizeof (guint) * w->n_nodes);
  guint64 best_crossings = count_all (w, &cb, NULL);
  gboolean cancelled = FALSE;

  /* Stop early once four sweeps in a row (two down, two up) found nothing better. */
  for (guint s = 0, stale = 0; s < sweeps && best_crossings > 0 && stale < 4; s++)
    {
      if (g_cancellable_is_cancelled (cancellable))
        {
          cancelled = TRUE;
          break;
        }
      gboolean down = s % 2 == 0;
      if (down)
        for (guint r = 1; r < w->n_ranks; r++)
          sweep_layer (w, r, TRUE, items, slots);
      else
        for (guint r = w->n_ranks - 1; r-- > 0;)
          sweep_layer (w, r, FALSE, items, slots);
      count_all (w, &cb, pairs);
      transpose_all (w, buf, pairs, &cb);
      guint64 c = 0;
      for (guint r = 0; r + 1 < w->n_ranks; r++)
        c += pairs[r];
      stale++;
      if (c < best_crossings)
        {
          stale = 0;
          best_crossings = c;
          memcpy (best, w->order, sizeof (guint) * w->n_nodes);
        }
    }
  memcpy (w->order, best, sizeof (guint) * w->n_nodes);
  update_pos (w);
  count_buffers_clear (&cb);
  return !cancelled;
}
