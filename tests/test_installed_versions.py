"""The installed-package versions trainlint reads when nothing pins a package."""

from __future__ import annotations


def test_installed_reads_the_same_versions_as_importlib_metadata():
    """`installed` scans .dist-info folders instead of importing importlib.metadata (~10 ms a run);
    it must agree with importlib.metadata for every distribution of this environment."""
    import importlib.metadata as metadata

    from linter.versions import installed

    names = sorted({distribution.metadata["Name"] for distribution in metadata.distributions()})
    assert names
    assert {name: installed(name) for name in names} == {name: metadata.version(name) for name in names}
    assert installed("surely-not-an-installed-project") is None
