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
    "← → step, space plays, click a node to jump; drag to pan, ctrl+wheel or +/− to zoom":
        "← → 单步，空格键播放，点击节点可跳转；拖动可平移，Ctrl+滚轮或 +/− 可缩放",

    # ---- stepper: legend and panel ----
    "running now": "正在执行",
    "in the ready queue": "在就绪队列中",
    "done": "已完成",
    "gradient on an edge": "边上的梯度",
    "seed": "初始梯度",
    "ready queue": "就绪队列",
    "waiting for": "等待",
    "chain rule": "链式法则",
    "with numbers": "代入数值",
    "incoming gradient": "传入的梯度",
    "outgoing gradients": "传出的梯度",
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
    "saved: freed by backward": "保存的张量：已被反向传播释放",
    "stale": "已过期",

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
    "before": "之前",
    "after": "之后",

    # ---- gradcheck heatmaps and blame ----
    "numerical": "数值",
    "analytical": "解析",
    "difference": "差值",
    "real part": "实部",
    "imaginary part": "虚部",
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
    "{n} identical blocks: click to unfold": "{n} 个相同的块：点击展开",
    "{n} nodes: click to open": "{n} 个节点：点击展开",
    "{fmt} output needs the Graphviz `dot` program, which is not on PATH; use format='svg' (laid out without it), "
    "or apt-get install graphviz":
        "{fmt} 输出需要 Graphviz 的 `dot` 程序，但它不在 PATH 中；请使用 format='svg'（无需 dot 即可排布），"
        "或者运行 apt-get install graphviz",
}
