"""A Redis cache that the site can do without (issue 16, item 8).

Winnow keeps only copies in its cache: sessions are ``cached_db`` (the database holds
each session, Redis a copy) and a user's roles are read from the database on a miss
(``core.roles``). So when Redis cannot be reached, ``FallbackRedisCache`` answers every
read as a miss and drops every write, and the pages carry on from the database instead
of failing with a 500. The first failure is logged (a warning naming the error); later
ones are not, until Redis answers again, which is logged too. After a failure the cache
is not asked again for ``retry_seconds`` (default 5), so an outage costs one refused
connection per few seconds per process, not one per cache call.

``probe`` talks to Redis without the fallback: the health endpoint uses it to report
the cache as down while the pages keep working.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import BaseCache
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger("winnow.cache")

#: What "Redis cannot be reached" raises (refused, reset, DNS, timeouts).
UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)

T = TypeVar("T")


class FallbackRedisCache(RedisCache):
    """Django's ``RedisCache``; an unreachable Redis is a miss (reads) or a no-op (writes)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = dict(params.get("OPTIONS") or {})
        self.retry_seconds = float(options.pop("retry_seconds", 5.0))
        # a Redis that does not answer must not hold a request for long
        options.setdefault("socket_connect_timeout", 1.0)
        options.setdefault("socket_timeout", 1.0)
        super().__init__(server, {**params, "OPTIONS": options})
        self._lock = threading.Lock()
        self._down_until = 0.0  # monotonic time before which Redis is not asked
        self._down = False  # a failure was logged and Redis has not answered since

    @property
    def is_down(self) -> bool:
        return self._down

    def _guard(self, call: Callable[[], T], fallback: T) -> T:
        if self._down and time.monotonic() < self._down_until:
            return fallback
        try:
            result = call()
        except UNREACHABLE as error:
            with self._lock:
                self._down_until = time.monotonic() + self.retry_seconds
                first = not self._down
                self._down = True
            if first:
                logger.warning(
                    "cache unreachable (%s: %s): reads are misses and writes are dropped;"
                    " sessions and roles come from the database until it answers",
                    type(error).__name__,
                    error,
                )
            return fallback
        if self._down:
            with self._lock:
                was_down, self._down = self._down, False
            if was_down:
                logger.warning("cache reachable again")
        return result

    def probe(self) -> None:
        """Write and read a value without the fallback; raises when Redis cannot be reached."""
        RedisCache.set(self, "winnow:health", "1", 10)
        if RedisCache.get(self, "winnow:health") != "1":
            raise RuntimeError("the cache did not keep a value")

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._guard(lambda: super(FallbackRedisCache, self).get(key, default, version), default)

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._guard(lambda: super(FallbackRedisCache, self).get_many(keys, version), {})

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._guard(lambda: super(FallbackRedisCache, self).has_key(key, version), False)

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._guard(lambda: super(FallbackRedisCache, self).add(key, value, timeout, version), False)

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        self._guard(lambda: super(FallbackRedisCache, self).set(key, value, timeout, version), None)

    def set_many(self, data: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> list[Any]:
        return self._guard(
            lambda: super(FallbackRedisCache, self).set_many(data, timeout, version), list(data)
        )

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._guard(lambda: super(FallbackRedisCache, self).touch(key, timeout, version), False)

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self._guard(lambda: super(FallbackRedisCache, self).delete(key, version), False)

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._guard(lambda: super(FallbackRedisCache, self).delete_many(keys, version), None)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        # a counter that cannot be read does not exist, as Django says for a missing key
        def call() -> int:
            return super(FallbackRedisCache, self).incr(key, delta, version)

        missing = object()
        result: Any = self._guard(call, missing)
        if result is missing:
            raise ValueError(f"Key '{key}' not found (the cache is unreachable)")
        return int(result)

    def clear(self) -> None:
        self._guard(lambda: super(FallbackRedisCache, self).clear(), None)


def cache_probe(cache: BaseCache) -> None:
    """For the health endpoint: raise when ``cache`` cannot keep a value, even one whose
    failures the pages do not see."""
    if isinstance(cache, FallbackRedisCache):
        cache.probe()
        return
    cache.set("winnow:health", "1", 10)
    if cache.get("winnow:health") != "1":
        raise RuntimeError("the cache did not keep a value")
