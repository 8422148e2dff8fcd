"""The admin console at `/admin`: server-rendered pages over the bridge, scoped per workspace."""

from adapters.admin.app import admin_app
from adapters.admin.deps import AdminDeps

__all__ = ["AdminDeps", "admin_app"]
