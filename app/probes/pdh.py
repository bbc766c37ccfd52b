"""Windows' own performance counters (PDH), read through ctypes: what Task Manager shows.

A wildcard counter path (``\\GPU Engine(*)\\Utilization Percentage``) answers
one value per instance. Utilisation is a rate, so a counter needs two
collections before it has a value: the query collects once when a path is
added and again at every read, and a reader kept between reads answers the
load since the previous read. Every call goes through an injected ``pdh``
library so that the calls are tested on any OS against a fake; a failure reads
as no values, never as an exception.
"""

from __future__ import annotations

import ctypes
import logging
from typing import Any, Protocol

log = logging.getLogger(__name__)

ERROR_SUCCESS = 0
PDH_MORE_DATA = 0x800007D2
PDH_FMT_DOUBLE = 0x00000200
PDH_FMT_NOCAP100 = 0x00008000  # an engine summed over processes may pass 100
PDH_CSTATUS_VALID_DATA = 0x0
PDH_CSTATUS_NEW_DATA = 0x1


class PDH_FMT_COUNTERVALUE(ctypes.Structure):
    _fields_ = [("CStatus", ctypes.c_uint32), ("doubleValue", ctypes.c_double)]


class PDH_FMT_COUNTERVALUE_ITEM_W(ctypes.Structure):
    _fields_ = [("szName", ctypes.c_wchar_p), ("FmtValue", PDH_FMT_COUNTERVALUE)]


class CounterReader(Protocol):
    def read(self, path: str) -> dict[str, float]: ...

    def close(self) -> None: ...


def _pdh_dll() -> Any:
    return ctypes.WinDLL("pdh")  # type: ignore[attr-defined]


class PdhCounters:
    """One PDH query holding each counter path asked for so far."""

    def __init__(self, pdh: Any = None) -> None:
        self._pdh = pdh
        self._query: ctypes.c_void_p | None = None
        self._counters: dict[str, ctypes.c_void_p] = {}
        self._failed: set[str] = set()  # paths Windows refused: not asked again
        self._no_pdh = False

    def _lib(self) -> Any:
        if self._pdh is None:
            self._pdh = _pdh_dll()
        return self._pdh

    def _counter(self, path: str) -> ctypes.c_void_p | None:
        if path in self._counters:
            return self._counters[path]
        pdh = self._lib()
        if self._query is None:
            query = ctypes.c_void_p()
            if pdh.PdhOpenQueryW(None, None, ctypes.byref(query)) != ERROR_SUCCESS:
                self._no_pdh = True
                raise OSError("PdhOpenQueryW failed")
            self._query = query
        counter = ctypes.c_void_p()
        status = pdh.PdhAddEnglishCounterW(self._query, path, None, ctypes.byref(counter))
        if status != ERROR_SUCCESS:
            raise OSError(f"PdhAddEnglishCounterW({path}) failed: {status & 0xFFFFFFFF:#x}")
        self._counters[path] = counter
        pdh.PdhCollectQueryData(self._query)  # the first of the two samples a rate needs
        return counter

    def read(self, path: str) -> dict[str, float]:
        """{instance: value} for a wildcard path; {} when PDH cannot answer."""
        if self._no_pdh or path in self._failed:
            return {}
        try:
            counter = self._counter(path)
            pdh = self._lib()
            if counter is None or pdh.PdhCollectQueryData(self._query) != ERROR_SUCCESS:
                return {}
            return self._values(pdh, counter)
        except AttributeError as exc:  # no pdh.dll here (not Windows)
            log.debug("pdh: unavailable (%s)", exc)
            self._no_pdh = True
            return {}
        except OSError as exc:
            log.info("pdh: %s unreadable (%s); its pause rules stay off", path, exc)
            self._failed.add(path)
            return {}

    @staticmethod
    def _values(pdh: Any, counter: ctypes.c_void_p) -> dict[str, float]:
        size, count = ctypes.c_uint32(0), ctypes.c_uint32(0)
        fmt = PDH_FMT_DOUBLE | PDH_FMT_NOCAP100
        status = pdh.PdhGetFormattedCounterArrayW(
            counter, fmt, ctypes.byref(size), ctypes.byref(count), None
        )
        if (status & 0xFFFFFFFF) != PDH_MORE_DATA or not size.value:
            return {}
        buffer = ctypes.create_string_buffer(size.value)
        status = pdh.PdhGetFormattedCounterArrayW(
            counter, fmt, ctypes.byref(size), ctypes.byref(count), buffer
        )
        if status != ERROR_SUCCESS:
            return {}
        items = ctypes.cast(buffer, ctypes.POINTER(PDH_FMT_COUNTERVALUE_ITEM_W))
        values: dict[str, float] = {}
        for index in range(count.value):
            item = items[index]
            if item.FmtValue.CStatus in (PDH_CSTATUS_VALID_DATA, PDH_CSTATUS_NEW_DATA):
                values[str(item.szName)] = float(item.FmtValue.doubleValue)
        return values

    def close(self) -> None:
        if self._query is not None and self._pdh is not None:
            self._pdh.PdhCloseQuery(self._query)
        self._query = None
        self._counters = {}
