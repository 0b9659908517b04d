"""Version pins near a config (linter/versions.py)."""

from linter import versions
from linter.versions import pinned


def test_pin_above_the_working_directory_is_found_for_a_relative_path(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("peft==0.11.1\n", "utf-8")
    (tmp_path / "configs").mkdir()
    monkeypatch.chdir(tmp_path / "configs")
    found = pinned("peft", versions.Path("adapter_config.json"))
    assert found == ("0.11.1", versions.Path("../requirements.txt"))


def test_same_relative_name_in_another_folder_reads_that_folders_pin(tmp_path, monkeypatch):
    for folder, version in (("a", "0.11.1"), ("b", "0.12.0")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "requirements.txt").write_text(f"peft=={version}\n", "utf-8")
    monkeypatch.chdir(tmp_path / "a")
    assert pinned("peft", versions.Path("x.json"))[0] == "0.11.1"
    monkeypatch.chdir(tmp_path / "b")
    assert pinned("peft", versions.Path("x.json"))[0] == "0.12.0"
