"""Chinese translations of the visualizer's user-visible strings, keyed by the English text.

`viz.set_options(lang="zh")` makes `tr(text)` (in `_i18n.py`) look each string up here; a
string without an entry shows in English. Placeholders such as `{n}` must survive the
translation unchanged (a test checks it), since the text is formatted after the lookup.
Terms follow the usual Chinese deep-learning vocabulary: 梯度, 反向传播, 计算图, 叶子节点,
钩子, 雅可比矩阵, 链式法则.
"""

ZH = {
    # ---- stepper: buttons, tooltips, keyboard help ----
    "Back": "上一步",
    "Back (←)": "上一步（←）",
    "Next": "下一步",
    "Next (→)": "下一步（→）",
    "Play": "播放",
    "Pause": "暂停",
    "Play / pause (space)": "播放 / 暂停（空格键）",
    "Reset": "重置",
    "Reset (Home)": "重置（Home 键）",
    "step": "步骤",
    "step {k} / {n}": "第 {k} / {n} 步",
    "text": "文字",
    "Text size (viz.set_options(scale=...) sets it for every picture)":
        "文字大小（viz.set_options(scale=...) 可为所有图统一设置）",
    "{n} steps · ← → to step, space to play": "共 {n} 步 · 按 ← → 单步，空格键播放",
    "← → step, space plays, click a node to jump and see its tensor; drag to pan, ctrl+wheel or +/− to zoom":
        "← → 单步，空格键播放，点击节点可跳转并查看它的张量；拖动可平移，Ctrl+滚轮或 +/− 可缩放",

    # ---- stepper: legend and panel ----
    "running now": "正在执行",
    "in the ready queue": "在就绪队列中",
    "done": "已完成",
    "gradient on an edge": "边上的梯度",
    "(changed)": "（已改变）",

    # ---- the graph (viz.draw) and its zoom bar ----
    "fit": "适应",
    "Zoom in (+)": "放大（+）",
    "Zoom out (−)": "缩小（−）",
    "Show the whole graph (0, or double-click the graph)": "显示整张计算图（按 0，或双击计算图）",
    "laying out the graph...": "正在排布计算图……",
    "value": "值",
    "grad": "梯度",
    "data": "数据",
    "output": "输出",
    "leaf": "叶子节点",
    "tensor": "张量",

    # ---- hook kinds (timeline lanes, stepper panel) ----
    "tensor hook": "张量钩子",
    "node pre-hook": "节点前置钩子",
    "node hook": "节点钩子",
    "post-accumulate hook": "累加后钩子",
    "module forward pre-hook": "模块前向前置钩子",
    "module forward hook": "模块前向钩子",
    "module backward pre-hook": "模块反向前置钩子",
    "module backward hook": "模块反向钩子",
    "multi-grad hook": "多梯度钩子",
    "autograd.grad capture": "autograd.grad 捕获",
    "captured for autograd.grad": "为 autograd.grad 捕获",
    "forward": "前向传播",
    "after backward": "反向传播之后",

    # ---- gradcheck heatmaps and blame ----
    "numerical": "数值",
    "analytical": "解析",
    "passed": "通过",
    "failed": "失败",
    "skipped": "跳过",
    "error": "出错",

    # ---- gradcheck heatmaps: axes, hover read-out, tables ----
    "numerical (finite differences)": "数值（有限差分）",
    "analytical (backward)": "解析（反向传播）",
    "(own scale)": "（独立色标）",
    "output element": "输出元素",
    "input element": "输入元素",
    "fails": "不通过",
    "passes": "通过",
    "FAILED": "失败",
    "fast mode": "快速模式",
    "click to pin, click again to release": "单击固定，再次单击取消",
    "worst entries of output {o} / input {i}": "输出 {o} / 输入 {i} 中误差最大的元素",
    "no Jacobian pair to show": "没有可显示的雅可比矩阵对",
    "{n} more passing pair(s) not shown (pass max_pairs= to see them)":
        "另有 {n} 对通过检验的未显示（传入 max_pairs= 可查看）",

    # ---- stepper panel and graph explorer ----
    "gradient": "梯度",
    "shape": "形状",
    "output value": "输出值",
    "to input {i}": "发往输入 {i}",
    "summed from shape {src}: the adjoint of broadcasting is a sum": "从形状 {src} 求和而来：广播的伴随运算是求和",
    "saved tensors (with versions)": "保存的张量（含版本号）",
    "click a node to see its tensor": "点击节点查看它的张量",
    "click a module box to open it, an open module's frame to close it, any node to see its tensor":
        "点击模块方框将其展开，点击已展开模块的边框将其折叠，点击任意节点查看它的张量",
    "nothing to show for this node": "这个节点没有可显示的内容",
    "freed by backward (retain_graph=False)": "已被反向传播释放（retain_graph=False）",
    "stale": "已过期",
    "close": "关闭",
    "click a node to see its tensor (value, gradient, saved tensors)": "点击节点查看它的张量（值、梯度、保存的张量）",
    "{n} identical blocks: click to unfold": "{n} 个相同的块：点击展开",
    "{n} nodes: click to open": "{n} 个节点：点击展开",
    "{fmt} output needs the Graphviz `dot` program, which is not on PATH; use format='svg' or 'png' (made "
    "without it; png and pdf need pip install cairosvg), or apt-get install graphviz":
        "{fmt} 输出需要 Graphviz 的 `dot` 程序，但它不在 PATH 中；请使用 format='svg' 或 'png'（无需 dot 即可生成；"
        "png 和 pdf 需要 pip install cairosvg），或者运行 apt-get install graphviz",

    # ---- stepper panel: sections and lines ----
    "Seed": "初始梯度",
    "backward starts": "反向传播开始",
    "at {roots}": "从 {roots} 出发",
    "The gradient of the output with respect to itself starts the chain rule; it flows down the edges.":
        "输出对自身的梯度是链式法则的起点；它沿着边向下流动。",
    "Gradient arriving": "传入的梯度",
    "from {src}": "来自 {src}",
    "= sum of {n} contributions (the tensor is used {n} times):": "= {n} 份贡献之和（该张量被使用了 {n} 次）：",
    "after hooks:": "经过钩子之后：",
    "Chain rule: upstream × local = downstream": "链式法则：上游梯度 × 局部导数 = 下游梯度",
    "Accumulate into the leaf": "累加到叶子节点",
    ".grad was None: the first gradient is stored (a copy).": ".grad 原为 None：存入第一个梯度（一份副本）。",
    ".grad already held a value: gradients accumulate (call .grad = None or zero_grad() between steps).":
        ".grad 中已有值：梯度会累加（两步之间请设置 .grad = None 或调用 zero_grad()）。",
    "nothing accumulated (no gradient arrived, or autograd.grad returned it instead of writing .grad)":
        "没有累加任何梯度（没有梯度到达，或者 autograd.grad 直接返回了梯度而没有写入 .grad）",
    "no input needs a gradient from this node": "没有输入需要从这个节点获得梯度",
    "Hooks": "钩子",
    "Engine: ready queue and dependencies": "引擎：就绪队列与依赖关系",
    "ready (next first):": "就绪（下一个在最前）：",
    "+{n} more nodes": "另外 {n} 个节点",
    "waiting for edges:": "等待的边：",
    "ready queue empty": "就绪队列为空",
    "ready queue empty: backward is done": "就绪队列为空：反向传播已完成",
    "Not shown": "未显示",
    "backward ran {n} more node(s) after this one (max_steps={m}); viz.draw shows the whole graph":
        "在这之后反向传播又执行了 {n} 个节点（max_steps={m}）；viz.draw 可显示整张计算图",
    "(a node not drawn)": "（一个未画出的节点）",

    # ---- what an unusual node is (_nodenotes: the stepper's panel, the graph's tooltips) ----
    "the derivative of {formula}, the formula that computed a first gradient: create_graph=True recorded it, "
    "so that gradient can be differentiated again":
        "{formula}（计算一阶梯度的公式）的导数：create_graph=True 记录了它，因此这个梯度还可以再次求导",
    "torch's Scalar overload (t {op} a number, written inside a backward formula): one edge, for the tensor; "
    "the number is a constant":
        "torch 的 Scalar 重载（反向传播公式中的 t {op} 一个数）：只有一条边，对应张量；这个数是常数",
    "torch has no derivative formula here: a backward that reaches this node raises":
        "torch 在这里没有求导公式：反向传播一旦到达这个节点就会报错",
    "a backward that reaches this node raises: torch refuses a derivative here (a once_differentiable backward "
    "differentiated again, for example)":
        "反向传播一旦到达这个节点就会报错：torch 在这里拒绝求导（例如对 once_differentiable 的反向传播再次求导）",
    "output {v}": "输出 {v}",
    "writes {x}.grad": "写入 {x}.grad",

    # ---- graph labels ----
    "output {i}": "输出 {i}",
    "hooks:": "钩子：",
    "... {n} more nodes": "……另外 {n} 个节点",
    "1 node: click to open": "1 个节点：点击展开",

    # ---- hook timeline ----
    "hook timeline": "钩子时间线",
    "backward {i}": "第 {i} 次反向传播",
    "on {target}": "作用于 {target}",
    "{n} firing(s), {k} changed a gradient; hover a card to find its node":
        "共触发 {n} 次，其中 {k} 次改变了梯度；把鼠标悬停在卡片上可找到对应的节点",
    "no hook fired while recording; register one (t.register_hook(fn), node.register_prehook(fn), ...) and run "
    "backward inside `with viz.record() as tape:`":
        "记录期间没有钩子被触发；请先注册一个钩子（t.register_hook(fn)、node.register_prehook(fn) 等），"
        "然后在 `with viz.record() as tape:` 中执行反向传播",

    # ---- gradcheck titles and blame ----
    "FAILED ({n} of {m} entries)": "失败（{m} 个元素中有 {n} 个）",
    "output {o} w.r.t. input {i}{kind}{mode}: {verdict}; worst out{oe}/in{ie}: numerical {n} vs analytical {a}":
        "输出 {o} 对输入 {i}{kind}{mode}：{verdict}；误差最大处 out{oe}/in{ie}：数值 {n}，解析 {a}",
    "output {o} w.r.t. input {i}{kind}{mode}: imaginary part of the same Jacobian; at out{oe}/in{ie}: "
    "numerical {n} vs analytical {a}":
        "输出 {o} 对输入 {i}{kind}{mode}：同一雅可比矩阵的虚部；在 out{oe}/in{ie} 处：数值 {n}，解析 {a}",
    "{n} wrong": "{n} 个错误",
    "all {n} checked nodes pass": "检验的 {n} 个节点全部通过",
    "its backward disagrees with finite differences on its own inputs": "它的反向传播在其自身输入上与有限差分不一致",
    "first failing node:": "第一个失败的节点：",
    "every node": "所有节点",
    "node": "节点",
    "verdict": "结论",
    "why": "原因",
    "{n} node(s) gradchecked on their recorded inputs (float64), {k} skipped; green passed, red failed, "
    "dashed not checked":
        "在记录下的输入上（float64）对 {n} 个节点做了梯度检验，跳过 {k} 个；绿色为通过，红色为失败，虚线为未检验",

    # ---- exported pages ----
    "microtorch backward, step by step": "microtorch 反向传播单步演示",
    "microtorch blame": "microtorch 追责模式",
    "microtorch eps sweep": "microtorch eps 扫描",
    "microtorch gradcheck": "microtorch 梯度检验",
    "microtorch graph": "microtorch 计算图",
    "microtorch hook timeline": "microtorch 钩子时间线",
    "microtorch model explorer": "microtorch 模型浏览器",
    "light / dark": "浅色 / 深色",
    "Switch between light and dark": "在浅色与深色之间切换",

    # names, the same in both languages (listed so that every tr() key has an entry)
    "microtorch": "microtorch",
    "retain_grad": "retain_grad",
    "...": "...",
}


# ---- Chinese text in matplotlib figures (the gradcheck heatmaps) ------------------------------
# matplotlib's default font (DejaVu Sans) has no Chinese glyphs: titles come out as empty boxes,
# with a "Glyph ... missing" warning per character. A list of families makes matplotlib fall
# back glyph by glyph, so Latin text and digits keep their usual font.

CJK_FAMILIES = ("Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
                "Microsoft YaHei", "SimHei", "PingFang SC", "Heiti SC", "Hiragino Sans GB",
                "Arial Unicode MS")
# files of those families, for a matplotlib font cache built before the font was installed
_CJK_FILES = ("notosanscjk", "sourcehansans", "wqy-microhei", "wqy-zenhei", "msyh", "simhei",
              "pingfang", "stheiti", "hiragino sans gb", "arial unicode")


def _no_weight_notice(record):
    return "Failed to find font weight" not in record.getMessage()


def matplotlib_families(base="DejaVu Sans"):
    """[base, the installed Chinese families...] for rcParams["font.family"]; [base] if none.

    Install one on Debian/Ubuntu with `apt-get install fonts-wqy-microhei` (5 MB) or
    `fonts-noto-cjk`; Windows and macOS ship one (Microsoft YaHei, PingFang SC).
    """
    import logging
    from matplotlib import font_manager
    # most Chinese fonts have no bold face; matplotlib then uses the regular one, which is fine,
    # but logs "Failed to find font weight bold" into the notebook: drop that one message
    log = logging.getLogger("matplotlib.font_manager")
    if _no_weight_notice not in log.filters:
        log.addFilter(_no_weight_notice)
    fm = font_manager.fontManager
    known = {f.name for f in fm.ttflist}
    if not known.intersection(CJK_FAMILIES):
        for path in font_manager.findSystemFonts():
            if any(k in path.lower().replace(" ", "") for k in (s.replace(" ", "") for s in _CJK_FILES)):
                try:
                    fm.addfont(path)
                except (OSError, RuntimeError, ValueError):   # an unreadable font file: skip it
                    continue
        known = {f.name for f in fm.ttflist}
    return [base] + [f for f in CJK_FAMILIES if f in known]
