"""Chinese translations of the viz strings, keyed by the English text (see _i18n.py).

Owned by the Chinese edition; an entry missing here shows in English."""

ZH = {}
