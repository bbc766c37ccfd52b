"""A "home router" built for one test: a network namespace joined to the root one by a
veth pair on the test's own addresses, whose nftables firewall drops inbound
connections and lets outbound ones (and their replies) through.

    with HomeNetwork.create() as home:
        home.run(["python", ...])       # argv prefixed with `ip netns exec <ns>`
        home.root_address, home.home_address

``unavailable()`` says why namespaces cannot be made here (not root, no ``ip``
or ``nft``, or the kernel refuses); the test skips with that sentence. Teardown
deletes the namespace and the root end of the veth even when the test failed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

# Drop every new inbound connection; loopback and replies to our own dials pass.
FIREWALL = """
table inet home_router {
    chain input {
        type filter hook input priority 0; policy drop;
        iif "lo" accept
        ct state established,related accept
    }
}
"""


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def unavailable() -> str | None:
    """Why a namespace cannot be built here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (this test runs as a normal user)"
    for tool, package in (("ip", "iproute2"), ("nft", "nftables")):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (Debian package {package}; .ci/install-netns.sh)"
    probe = f"mnprobe{os.getpid() % 100000}"
    made = _run("ip", "netns", "add", probe)
    _run("ip", "netns", "del", probe)
    if made.returncode != 0:
        return f"`ip netns add` failed here: {made.stderr.strip()}"
    return None


@dataclass
class HomeNetwork:
    namespace: str
    root_link: str
    root_address: str
    home_address: str

    @classmethod
    @contextlib.contextmanager
    def create(cls) -> Iterator[HomeNetwork]:
        tag = os.getpid() % 100000
        subnet = 10 + tag % 240  # 10.77.<subnet>.0/24, the test's own addresses
        home = cls(f"mnhome{tag}", f"mnr{tag}", f"10.77.{subnet}.1", f"10.77.{subnet}.2")
        try:
            home._build(f"mnh{tag}")
            yield home
        finally:
            home.destroy()

    def _build(self, home_link: str) -> None:
        ns = self.namespace
        steps = [
            ("ip", "netns", "add", ns),
            ("ip", "link", "add", self.root_link, "type", "veth", "peer", "name", home_link),
            ("ip", "link", "set", home_link, "netns", ns),
            ("ip", "addr", "add", f"{self.root_address}/24", "dev", self.root_link),
            ("ip", "link", "set", self.root_link, "up"),
            ("ip", "-n", ns, "addr", "add", f"{self.home_address}/24", "dev", home_link),
            ("ip", "-n", ns, "link", "set", home_link, "up"),
            ("ip", "-n", ns, "link", "set", "lo", "up"),
        ]
        for step in steps:
            done = _run(*step)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(step)} failed: {done.stderr.strip()}")
        firewall = subprocess.run(
            ["ip", "netns", "exec", ns, "nft", "-f", "-"],
            input=FIREWALL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if firewall.returncode != 0:
            raise RuntimeError(f"the namespace's firewall failed: {firewall.stderr.strip()}")

    def prefix(self) -> list[str]:
        """Prepend to an argv to run it inside the home namespace."""
        return ["ip", "netns", "exec", self.namespace]

    def destroy(self) -> None:
        _run("ip", "netns", "del", self.namespace)  # takes its veth end, and so the pair
        _run("ip", "link", "del", self.root_link)  # already gone unless the move failed
