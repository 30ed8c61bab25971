"""The strong Wolfe line search of LBFGS (More & Thuente's bracketing and zoom, with cubic interpolation,
as in minFunc and torch). Along a direction d from x, find a step t with
    f(x + t d) <= f(x) + c1 t g.d          (sufficient decrease)
    |g(x + t d).d| <= c2 |g.d|              (the slope has flattened enough)."""


def cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, kept within bounds."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt() if hasattr(d2_square, "sqrt") else d2_square ** 0.5
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


class _Point:
    """A trial step t with its loss f, flat gradient g and slope gtd = g.d."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Returns (f_new, g_new, t, number of evaluations). obj_func(x, t, d) -> (loss, flat gradient)."""
    d_norm = d.abs().max()
    start = _Point(0, f, g.clone(), gtd)
    bracket, done, evals, ls_iter = _bracket(obj_func, x, t, d, start, c1, c2, max_ls)
    best, more = _zoom(obj_func, x, d, start, bracket, done, ls_iter, d_norm, c1, c2, tolerance_change, max_ls)
    return best.f, best.g, best.t, evals + more


def _bracket(obj_func, x, t, d, start, c1, c2, max_ls):
    """Grow the step until an interval surely holds a point satisfying the conditions (or one does)."""
    f_new, g_new = obj_func(x, t, d)
    new, prev, evals, ls_iter = _Point(t, f_new, g_new, g_new.dot(d)), start, 1, 0
    while ls_iter < max_ls:
        if new.f > start.f + c1 * new.t * start.gtd or (ls_iter > 1 and new.f >= prev.f):
            return [prev, _copy(new)], False, evals, ls_iter
        if abs(new.gtd) <= -c2 * start.gtd:
            return [new], True, evals, ls_iter
        if new.gtd >= 0:
            return [prev, _copy(new)], False, evals, ls_iter
        t = cubic_interpolate(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                              bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))  # extrapolate
        prev = _copy(new)
        f_new, g_new = obj_func(x, t, d)
        new = _Point(t, f_new, g_new, g_new.dot(d))
        evals += 1
        ls_iter += 1
    return [_Point(0, start.f, start.g, start.gtd), new], False, evals, ls_iter   # reached max_ls


def _copy(point):
    return _Point(point.t, point.f, point.g.clone(), point.gtd)


def _zoom(obj_func, x, d, start, bracket, done, ls_iter, d_norm, c1, c2, tolerance_change, max_ls):
    """Shrink the bracket by cubic interpolation until a point satisfies both conditions; returns the
    best point found and the number of evaluations."""
    evals, insuf_progress = 0, False
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:   # the interval is too small
            break
        t = cubic_interpolate(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f, bracket[1].gtd)
        t, insuf_progress = _safeguard(t, [b.t for b in bracket], insuf_progress)
        f_new, g_new = obj_func(x, t, d)
        new = _Point(t, f_new, g_new, g_new.dot(d))
        evals += 1
        ls_iter += 1
        if new.f > start.f + c1 * t * start.gtd or new.f >= bracket[low].f:
            bracket[high] = _copy(new)   # sufficient decrease fails: t is the new upper end
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if abs(new.gtd) <= -c2 * start.gtd:
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]   # the minimum lies on the other side
            bracket[low] = _copy(new)
    return bracket[low], evals   # (a one-point bracket, already done: low is 0)


def _safeguard(t, ends, insuf_progress):
    """Keep t away from the ends of the bracket: at least 10% of its width inside."""
    lo, hi = min(ends), max(ends)
    eps = 0.1 * (hi - lo)
    if min(hi - t, t - lo) < eps:
        if insuf_progress or t >= hi or t <= lo:
            t = hi - eps if abs(t - hi) < abs(t - lo) else lo + eps
            return t, False
        return t, True
    return t, False
