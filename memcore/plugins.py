"""Plugins from outside memcore: systems, retrievers, views and metrics that an installed package registers
through Python entry points, so `pip install my-memory` adds a system to the CLI, the app and the
benchmark without editing memcore.

A plugin's pyproject.toml names, per group, an object or a module:

    [project.entry-points."memcore.systems"]
    recent_k = "memcore_example.system:RecentKSystem"     # a BaseSystem subclass (or a module that
    [project.entry-points."memcore.retrievers"]           # registers its systems when imported)
    overlap = "memcore_example.retriever:OVERLAP"          # a Retriever (or a module)
    [project.entry-points."memcore.views"]
    recent_k = "memcore_example.view:VIEW"                 # a SystemView (or a module)
    [project.entry-points."memcore.metrics"]
    words = "my_metrics:WORDS"                             # a Metric (or a module; memcore.eval.metric_registry)

The loading itself lives in the one registry (memcore.registry: each kind loads its group once, after the
built-ins; a plugin that fails to import or to register, an import error, a name already taken, an object of
the wrong type, is skipped with a `PluginWarning` naming it, its package and its error, kept by
`plugin_errors()`); every extension point is listed in memcore.extensions. This module keeps the names
plugins and the app import. `MEMCORE_PLUGINS=0` runs memcore without installed plugins.
"""

from __future__ import annotations

from memcore.registry import (
    METRICS_GROUP,
    PLUGINS_ENV,
    RETRIEVERS_GROUP,
    SYSTEMS_GROUP,
    VIEWS_GROUP,
    PluginError,
    PluginWarning,
    is_module,
    load_plugins,
    plugin_errors,
    plugins_enabled,
)

__all__ = ["METRICS_GROUP", "PLUGINS_ENV", "RETRIEVERS_GROUP", "SYSTEMS_GROUP", "VIEWS_GROUP", "PluginError",
           "PluginWarning", "is_module", "load_plugins", "plugin_errors", "plugins_enabled"]
