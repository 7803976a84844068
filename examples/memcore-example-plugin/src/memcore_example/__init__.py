"""An example memcore plugin: the recent_k system, the dense+overlap retriever and recent_k's view.

Each lives in its own module, named by an entry point in pyproject.toml, so that memcore imports a
module only when the registry it belongs to is loaded (the retriever without the app's views).
"""
