"""Which of several equal values torch's CPU kernels put where: the order of ties in sort, topk and kthvalue.

torch's sort (stable=False) is the C++ standard library's std::sort (GCC's introsort: median-of-three
quicksort down to runs of 16, then one insertion sort), topk is std::nth_element or std::partial_sort, and
kthvalue is Sedgewick's quickselect. None of them keeps equal values in their first order, so the indices a
student sees for ties follow these algorithms; this module replays them on integer keys (each value's rank,
NaN above everything, as torch's comparators) so that microtorch gives the same indices.

Each partition step is done with numpy on a whole run (the i-th element that stops the left scan is swapped
with the i-th that stops the right one, as long as they have not crossed), so the cost is a few numpy calls
per run of more than 16 elements. A row whose values are all different has one answer; it takes numpy's sort.
Rows with equal values cost a Python loop each (about 0.05 ms for a short row; 0.2 s for 10^5 elements of 10
distinct values, where numpy's sort takes 5 ms): the price of torch's indices.
"""
import numpy as np

RUN = 16  # GCC's _S_threshold: runs this short are left to the final insertion sort


def ranks(x, descending=False):
    """integer keys ordering x's rows as torch's comparators do: NaN above all (below all when descending),
    equal values (and all NaNs) equal keys; descending orders by the negated keys."""
    flat = np.where(np.isnan(x), np.inf, x) if x.dtype.kind in "fc" else x
    _, inverse = np.unique(flat, return_inverse=True)
    keys = inverse.reshape(x.shape).astype(np.int64)
    if x.dtype.kind == "f":
        keys = np.where(np.isnan(x), keys.max(initial=0) + 1, keys)  # (+inf and NaN: NaN above)
    return -keys if descending else keys


def _has_ties(keys):
    """for each row (last axis) whether two of its keys are equal"""
    s = np.sort(keys, axis=-1)
    return (s[..., 1:] == s[..., :-1]).any(axis=-1)


def tied_rows(rows):
    """the rows (of a 2-d array of keys) in which two keys are equal: the only ones whose order needs a replay"""
    return np.flatnonzero(_has_ties(rows)) if rows.shape[-1] > 1 else np.zeros(0, np.intp)


# ---- std::sort -----------------------------------------------------------------------------------------
def std_sort(keys):
    """the permutation std::sort leaves on (key, index) pairs compared by key"""
    a, idx = keys.copy(), np.arange(len(keys))
    n = len(a)
    todo = [(0, n, 2 * (n.bit_length() - 1))] if n > 1 else []
    while todo:
        first, last, depth = todo.pop()
        while last - first > RUN:
            if depth == 0:
                _heap_sort(a, idx, first, last)
                break
            depth -= 1
            cut = _partition_pivot(a, idx, first, last)
            todo.append((cut, last, depth))
            last = cut
    if a.dtype.kind == "f" and np.isnan(a).any():  # (mode's plain `<` on floats: NaN breaks the order)
        return idx[_insertion_sort(a)]
    return idx[np.argsort(a, kind="stable")]  # (the final insertion sort: stable, from where the runs are)


def _insertion_sort(a):
    """GCC's final insertion sort, step by step (a NaN, smaller than nothing, stops what passes it)"""
    a, order = a.tolist(), list(range(len(a)))
    for i in range(1, len(a)):
        val, k = a[i], order[i]
        j = i
        if i < RUN and val < a[0]:
            j = 0
        else:
            while j > 0 and val < a[j - 1]:
                j -= 1
        a[j + 1:i + 1], order[j + 1:i + 1] = a[j:i], order[j:i]
        a[j], order[j] = val, k
    return np.array(order, np.intp)


def std_mode(values):
    """torch's mode index: std::sort with `<` on the values themselves, then the last place of the first longest
    run of equal values (a NaN is a run of its own)"""
    order = std_sort(values)
    s = values[order]
    ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
    return int(order[ends[np.argmax(np.diff(ends, prepend=-1))]])


def _swap(a, idx, i, j):
    a[i], a[j] = a[j], a[i]
    idx[i], idx[j] = idx[j], idx[i]


def _partition_pivot(a, idx, first, last):
    """GCC's __unguarded_partition_pivot: the median of a[first + 1], the middle and a[last - 1] moved to first,
    then the rest partitioned around it; returns the cut"""
    x, y, z = first + 1, first + (last - first) // 2, last - 1
    if a[x] < a[y]:
        m = y if a[y] < a[z] else z if a[x] < a[z] else x
    else:
        m = x if a[x] < a[z] else z if a[y] < a[z] else y
    _swap(a, idx, first, m)
    seg = a[first + 1:last]
    left, right = _stops(seg, a[first])
    swaps = int(np.count_nonzero(left[:len(right)] < right[:len(left)]))
    _exchange(a, idx, first + 1, left[:swaps], right[:swaps])
    cut = left[swaps] if swaps < len(left) else len(seg)
    if swaps:
        cut = min(cut, right[swaps - 1])
    return first + 1 + int(cut)


def _stops(seg, pivot):
    """where the left scan stops (not below the pivot), in order, and the right scan (not above), from the end"""
    return np.flatnonzero(~(seg < pivot)), np.flatnonzero(~(pivot < seg))[::-1]


def _exchange(a, idx, offset, i, j):
    i, j = i + offset, j + offset
    a[i], a[j] = a[j], a[i].copy()
    idx[i], idx[j] = idx[j], idx[i].copy()


def _heap_sort(a, idx, first, last):
    """GCC's std::__partial_sort(first, last, last): make_heap, then sort_heap (when the depth runs out)"""
    h = list(zip(a[first:last].tolist(), idx[first:last].tolist()))
    _make_heap(h, len(h))
    for end in range(len(h) - 1, 0, -1):
        _pop_heap(h, end, end)
    a[first:last] = [k for k, _ in h]
    idx[first:last] = [i for _, i in h]


def _make_heap(h, n):
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(h, parent, n, h[parent])


def _pop_heap(h, length, result):
    """move the top to `result` and re-heap the first `length` elements with result's old value"""
    value, h[result] = h[result], h[0]
    _adjust_heap(h, 0, length, value)


def _adjust_heap(h, hole, length, value):
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if h[child][0] < h[child - 1][0]:
            child -= 1
        h[hole], hole = h[child], child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        h[hole], hole = h[child - 1], child - 1
    parent = (hole - 1) // 2
    while hole > top and h[parent][0] < value[0]:
        h[hole], hole = h[parent], parent
        parent = (hole - 1) // 2
    h[hole] = value


# ---- topk: std::partial_sort, or std::nth_element then std::sort of the first k - 1 ------------------------
def std_topk(keys, k, sorted_=True):
    """the indices torch's topk returns (keys already ordered as its comparator: smallest first)"""
    n = len(keys)
    if k == 0:
        return np.zeros(0, np.int64)
    if k * 64 <= n:
        h = list(zip(keys.tolist(), range(n)))
        _heap_select(h, k, n)
        for end in range(k - 1, 0, -1):
            _pop_heap(h, end, end)
        return np.array([i for _, i in h[:k]], np.int64)
    a, idx = keys.copy(), np.arange(n)
    _introselect(a, idx, k - 1)
    head = idx[:k].copy()
    if sorted_ and k > 1:
        head[:k - 1] = idx[:k - 1][std_sort(a[:k - 1])]
    return head


def _heap_select(h, middle, last):
    """a heap of the `middle` smallest at the front (each smaller later one takes the top's place)"""
    _make_heap(h, middle)
    for i in range(middle, last):
        if h[i][0] < h[0][0]:
            _pop_heap(h, middle, i)


def nth_element(keys, nth):
    """the index std::nth_element leaves at place nth (from 0) of keys"""
    a, idx = keys.copy(), np.arange(len(keys))
    _introselect(a, idx, nth)
    return int(idx[nth])


def _introselect(a, idx, nth):
    first, last = 0, len(a)
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            h = list(zip(a[first:last].tolist(), idx[first:last].tolist()))
            _heap_select(h, nth + 1 - first, len(h))
            h[0], h[nth - first] = h[nth - first], h[0]
            a[first:last] = [k for k, _ in h]
            idx[first:last] = [i for _, i in h]
            return
        depth -= 1
        cut = _partition_pivot(a, idx, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    order = np.argsort(a[first:last], kind="stable")  # (the insertion sort of the last few)
    a[first:last], idx[first:last] = a[first:last][order], idx[first:last][order]


# ---- kthvalue: Sedgewick's quickselect (torch's quick_select_template) --------------------------------------
def quick_select(keys, k):
    """the index torch's kthvalue picks for the k-th smallest (k from 1)"""
    a, idx = keys.copy(), np.arange(len(keys))
    lo, hi, k = 0, len(a) - 1, k - 1
    while hi > lo:
        if hi == lo + 1:
            if a[lo] > a[hi]:
                _swap(a, idx, lo, hi)
            break
        _swap(a, idx, (lo + hi) >> 1, lo + 1)
        for i, j in ((lo + 1, hi), (lo, hi), (lo + 1, lo)):  # the median of three at lo, bounds beside it
            if a[i] > a[j]:
                _swap(a, idx, i, j)
        i, j = _sedgewick_partition(a, idx, lo, hi)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return int(idx[k])


def _sedgewick_partition(a, idx, lo, hi):
    """scans from lo + 2 up and hi - 1 down around the pivot a[lo] (an element equal to it stops both, and
    one stopping both is swapped with itself); the pivot then goes to j. Returns (i, j) where they stopped."""
    pivot = a[lo]
    left = np.flatnonzero(a[lo + 2:hi + 1] >= pivot) + lo + 2
    right = np.flatnonzero(a[lo + 1:hi] <= pivot)[::-1] + lo + 1
    swaps = int(np.count_nonzero(left[:len(right)] <= right[:len(left)]))
    done_l, done_r = left[:swaps], right[:swaps]
    _exchange(a, idx, 0, done_l, done_r)
    # the last scans stop at the next original stop or at a swapped place (not one swapped with itself)
    i, j = left[swaps] if swaps < len(left) else hi + 1, right[swaps] if swaps < len(right) else lo
    if swaps:
        i = min(i, done_r[done_r > done_l[-1]].min(initial=hi + 1))
        j = max(j, done_l[done_l < done_r[-1]].max(initial=lo))
    _swap(a, idx, lo, j)
    return i, j
