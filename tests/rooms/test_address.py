"""The student link's address (attention_rooms.address): a phone never gets ``localhost``."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from attention_rooms import address
from attention_rooms.address import is_loopback, network_address, student_base


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.8.9.10", "[::1]", "::1"])
def test_loopback_names_and_addresses_are_loopback(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["192.168.1.20", "10.0.0.5", "lab.uni.edu", "localhost.uni.edu", "", "[2001:db8::1]"])
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback(host)


@pytest.mark.parametrize("opened", ["http://localhost:8501/playground", "http://127.0.0.1:8501/playground"])
def test_a_lecturer_at_localhost_gives_students_this_machines_network_address(opened):
    base = student_base(opened, lan="192.168.1.20")
    assert base.url == "http://192.168.1.20:8501/playground"
    assert base.reachable and "192.168.1.20" in base.why


def test_a_lecturer_at_a_real_address_keeps_it_and_is_told_nothing():
    base = student_base("https://lab.uni.edu/playground", lan="192.168.1.20")
    assert (base.url, base.why, base.reachable) == ("https://lab.uni.edu/playground", "", True)


def test_the_public_url_wins_and_replaces_the_servers_base_path():
    base = student_base("http://127.0.0.1:8501/lab/multi_head", "/lab/", "https://uni.edu/attention/", "10.0.0.2")
    assert base.url == "https://uni.edu/attention/multi_head"
    assert address.PUBLIC_URL in base.why
    assert student_base("http://localhost:8501/", "", "https://uni.edu").url == "https://uni.edu/"


def test_no_network_says_so_instead_of_pretending():
    base = student_base("http://localhost:8501/playground", lan=None)
    assert not base.reachable and "no address on a network" in base.why


def test_the_network_address_is_one_of_this_machines_and_never_loopback():
    found = network_address()
    if found is None:  # a machine with no default route: nothing else to check
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe, pytest.raises(OSError):
            probe.connect(address._PROBE)
        return
    assert not ipaddress.ip_address(found).is_loopback
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((found, 0))  # only an address of this machine can be bound


def test_student_base_here_reads_the_environment(monkeypatch):
    monkeypatch.setenv(address.PUBLIC_URL, "https://uni.edu/lab")
    assert address.student_base_here("http://localhost:8501/playground", "").url == "https://uni.edu/lab/playground"
    monkeypatch.delenv(address.PUBLIC_URL)
    monkeypatch.setattr(address, "network_address", lambda: "10.9.8.7")
    assert address.student_base_here("http://localhost:8501/playground", "").url == "http://10.9.8.7:8501/playground"
