"""The settings panel (issue 26 item 2): a picker over systems and their variants, and per picked entry every
config field with its paper default, valid range or values and source, construction and query-time fields
apart, changed fields highlighted, "Paper defaults", the system's presets one click away, and "Save as variant".

A picker entry is a variant name (ui.variant_names); an edit replaces the entry with the new canonical name, so
the answer card, the link (?systems=) and exports all carry it. A construction change names another memory,
which the page builds only on a Build click; a query-time change answers from the memory already built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from memcore.systems import get_system
from memcore.systems.fields import FieldSpec, field_specs, format_value
from memcore.systems.variants import canonical, parse_value, presets, split_names, variant_name
from memcore.types import Conversation
from memcore.viz.safe import md_escape
from memcore.workbench import Workbench
from ui import state, widgets
from ui.variant_names import SAVED, offered, resolve

EXTRA = "_variants_extra"  # variant names edited or opened from a link this session: every picker offers them


def _extra() -> list[str]:
    return st.session_state.setdefault(EXTRA, [])


def _label(wb: Workbench, name: str) -> str:
    if name.startswith(SAVED):
        return f"{name} = {wb.saved_variants().get(name[1:], '?')}"
    return widgets.system_label(name) if name in widgets.systems() else name


def _checked(wb: Workbench, key: str) -> None:
    """The picker's entries (from a link or an earlier run) canonical and valid; a bad one is dropped, said."""
    cur = st.session_state.get(key)
    if cur is None:
        return
    good = []
    for n in cur:
        try:
            c = n if n.startswith(SAVED) else canonical(n)
            resolve(wb, c)
        except ValueError as e:
            st.warning(md_escape(f"Left out {n}: {e}"))
            continue
        if c not in good:
            good.append(c)
        if c not in widgets.systems() and not c.startswith(SAVED) and c not in _extra():
            _extra().append(c)
    if good != cur:
        st.session_state[key] = good


def variant_picker(wb: Workbench, label: str, default: Sequence[str], key: str, url: str | None = "systems") -> list[str]:
    """Multiselect over the systems, their presets, the saved variants and the variants edited this session (or
    opened from a link); the picked names go into the URL's `url` parameter (a fresh browser reopens them). The
    pick survives visits to other pages (state.keep_widget: Streamlit drops a widget's state when its page is left);
    a link's `url` parameter still wins."""
    if url:
        state.url_seed(key, url, None, many=True, split=split_names)
    state.keep_widget(key)
    _checked(wb, key)
    options = list(dict.fromkeys([*widgets.systems(), *offered(wb), *_extra(), *st.session_state.get(key, [])]))
    fallback = [d for d in default if d in options] or options[:1]
    start = None if key in st.session_state else fallback
    picked = st.multiselect(label, options, default=start, key=key, format_func=lambda n: _label(wb, n),
                            help="A system at its papers' defaults, a preset (system:preset), a saved variant "
                                 "(@name) or a variant edited in its settings below (system[field=value,...]).")
    state.kept(key, None if picked == fallback else picked)  # a pick of one's own is kept; the page's default follows
    if url:
        state.url_set(**{url: picked})
    return picked


def _replace(key: str, i: int, new: str) -> None:
    """Put variant `new` in place of picker entry i (and offer it in every picker)."""
    names = list(st.session_state.get(key, []))
    if i >= len(names):
        return
    names[i] = new
    st.session_state[key] = list(dict.fromkeys(names))
    if new not in widgets.systems() and not new.startswith(SAVED) and new not in _extra():
        _extra().append(new)


def _set_field(key: str, i: int, name: str, spec: FieldSpec, wkey: str, current: Any = None) -> None:
    """A field's widget changed: the entry becomes the variant with that value. A value refused (out of its bounds,
    unreadable) puts the field back to the value in use, `current`, and says so naming the bound: the field and the
    variant never disagree."""
    raw = st.session_state[wkey]
    st.session_state.pop(f"{wkey}_err", None)
    try:
        v = resolve(state.workbench(), name)
        value = parse_value(spec, raw, name) if spec.choices is None else raw
        new = canonical(variant_name(v.system, {**v.overrides, spec.name: value}, v.preset))
    except ValueError as e:
        st.session_state[wkey] = format_value(current) if spec.choices is None else current
        st.session_state[f"{wkey}_err"] = (f"{e} · {raw!r} not applied (valid: {spec.valid_short()}): the field is back to "
                                           f"{format_value(current)}, the value {name} uses.")
        return
    _replace(key, i, new)


def default_label(spec: FieldSpec) -> str:
    """'paper default', or 'memcore default' for a field the papers do not have (its source says "memcore
    extension"): a value the papers never set is not called theirs."""
    return "memcore default" if spec.source.strip().lower().startswith("memcore extension") else "paper default"


def _field_row(key: str, i: int, name: str, spec: FieldSpec, value: Any) -> None:
    changed = value != spec.default
    wkey = f"{key}_f{i}_{name}_{spec.name}"
    c1, c2, c3 = st.columns([3, 3, 6], vertical_alignment="center")
    field = md_escape(spec.name)
    c1.markdown((f":orange-background[**{field}**] :orange-badge[changed]" if changed else f"**{field}**")
                + f" :gray[{md_escape(spec.type_name)}]")
    common = {"key": wkey, "label_visibility": "collapsed", "on_change": _set_field,
              "args": (key, i, name, spec, wkey, value), "help": md_escape(spec.help) or None}
    if spec.choices is not None:
        opts = [*spec.choices, *([None] if spec.optional and None not in spec.choices else [])]
        c2.selectbox(spec.name, opts, index=opts.index(value) if value in opts else 0, format_func=format_value,
                     **common)
    else:
        c2.text_input(spec.name, format_value(value), **common)
    c3.caption(md_escape(f"{default_label(spec)} {format_value(spec.default)} · {spec.valid_short()} · "
                         f"{spec.source or '(source not declared)'}"))
    if err := st.session_state.get(f"{wkey}_err"):
        st.error(md_escape(err))


def _memory_note(wb: Workbench, name: str, conv: Conversation | None, construction: dict[str, Any]) -> None:
    mem = resolve(wb, name).memory_name
    built = conv is not None and state.ingest_status(wb, name, conv)[1]
    where = "" if conv is None else (" (built)" if built else " (not built yet)")
    if construction:
        changed = ", ".join(sorted(construction))
        then = ("" if built else "It is built only when you click Build." if conv is not None
                else "A run builds it per conversation (Start run).")
        (st.success if built else st.warning)(md_escape(
            f"Construction settings changed ({changed}): this variant answers from its own memory, {mem}{where}. "
            + then))
    else:
        st.info(md_escape(f"Query-time settings only: answers come from the memory of {mem}{where}, "
                          "without building another."))


def _presets_row(wb: Workbench, key: str, i: int, name: str, system: str, active: str) -> None:
    have = presets(system)
    if have:
        st.caption("Presets (the papers' ablations; the one in use is highlighted):")
    cols = st.columns(min(len(have) + 1, 5))
    cols[0].button("Paper defaults", key=f"{key}_reset{i}", icon=":material/restart_alt:", disabled=name == system,
                   on_click=_replace, args=(key, i, system), help=f"Reset every field to the papers' defaults ({system})")
    for n, p in enumerate(have):
        full = f"{system}:{p.name}"
        cols[(n + 1) % len(cols)].button(p.name, key=f"{key}_preset{i}_{p.name}", disabled=name == full,
                                         type="primary" if p.name == active else "secondary",
                                         on_click=_replace, args=(key, i, full),
                                         help=md_escape(f"{p.description} ({p.source})"))
    if not have:
        cols[-1].caption(md_escape(f"{system} registers no presets."))


def _save(key: str, i: int, shown: str, name_key: str) -> None:
    """Save the entry's variant under the typed name (the entry becomes @NAME), or keep the error to show."""
    st.session_state.pop(f"{name_key}_err", None)
    name = st.session_state.get(name_key, "").strip()
    try:
        state.workbench().save_variant(name, shown)
    except ValueError as e:
        st.session_state[f"{name_key}_err"] = str(e)
        return
    _replace(key, i, SAVED + name.removeprefix(SAVED))


def _save_row(key: str, i: int, shown: str) -> None:
    name_key = f"{key}_saveas{i}"
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    as_ = c1.text_input("Save as variant", key=name_key, placeholder="a name, e.g. short-chains",
                        help="Kept in the store as @NAME: every picker, `memcore systems --variants` and "
                             "`memcore eval --systems @NAME` find it. Saving a name again replaces it.")
    c2.button("Save as variant", key=f"{key}_save{i}", icon=":material/save:", disabled=not as_.strip(),
              on_click=_save, args=(key, i, shown, name_key))
    if err := st.session_state.get(f"{name_key}_err"):
        st.error(md_escape(err))


def _opened(key: str) -> None:
    """The user opened or closed panel `key`: remember it, so a new title (an edit renames the entry, and Streamlit
    treats an expander with another label as another widget) keeps the panel as the user left it."""
    st.session_state[f"{key}_open"] = bool(st.session_state.get(key))


def _box(title: str, key: str, nested: bool) -> Any:
    """An expander, or inside one (Streamlit nests none) a bordered box whose fields a toggle shows; None while
    closed: the fields (about 20 widgets per system, most of a page run's time) are drawn only when opened."""
    if not nested:
        box = st.expander(title, expanded=st.session_state.get(f"{key}_open", False), key=key,
                          icon=":material/tune:", on_change=_opened, args=(key,))
        return box if box.open else None
    box = st.container(border=True)
    return box if box.toggle(title, key=key) else None


def settings_panel(wb: Workbench, key: str, picked: Sequence[str], conv: Conversation | None = None,
                   nested: bool = False) -> None:
    """One expander per picked entry of picker `key` (a toggled box when `nested` in an expander), its title
    naming how many fields differ from the papers' defaults; once opened: its canonical name and memory, presets,
    every field by construction and query time (changed ones highlighted), and Save as variant. A closed panel
    draws none of that (it reruns the page when opened)."""
    for i, name in enumerate(picked):
        try:
            v = resolve(wb, name)
        except ValueError as e:
            st.error(md_escape(str(e)))
            continue
        specs = field_specs(get_system(v.system).config_class)
        cfg = v.config()
        changed = [s.name for s in specs if getattr(cfg, s.name) != s.default]
        title = f"Settings · {name}" + (f" · {len(changed)} changed from the papers' defaults" if changed else "")
        box = _box(md_escape(title), f"{key}_panel{i}", nested)
        if box is None:
            continue
        with box:
            st.markdown(f"Variant: `{v.name}`" + (f" (saved as `{name}`)" if name.startswith(SAVED) else ""))
            _memory_note(wb, name, conv, v.construction())
            _presets_row(wb, key, i, name, v.system, v.preset)
            for title_, query in (("Construction: a change builds a new memory", False),
                                  ("Query time: answers from the memory already built", True)):
                group = [s for s in specs if s.query_time is query]
                if group:
                    st.markdown(f"**{title_}**")
                    for spec in group:
                        _field_row(key, i, name, spec, getattr(cfg, spec.name))
            _save_row(key, i, v.name)
