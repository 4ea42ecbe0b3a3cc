"""PEP 517 backend: setuptools, with a fallback for machines without the `wheel` package.

setuptools before 70.1 builds wheels only through the separate `wheel` package. With
`pip install --no-build-isolation` on a machine that lacks it (pip cannot fetch it offline),
build_wheel here writes the pure-Python wheel itself: the package's .py files, METADATA from
pyproject.toml (read by setuptools), WHEEL and RECORD. Everything else is setuptools.build_meta.
"""
import base64
import hashlib
import os
import zipfile

from setuptools.build_meta import *  # noqa: F401,F403 - sdist, editable, hooks as setuptools has them

try:
    import wheel  # noqa: F401
    _HAVE_WHEEL = True
except ImportError:
    _HAVE_WHEEL = False

if not _HAVE_WHEEL:
    _ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def get_requires_for_build_wheel(config_settings=None):
        return []

    def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
        name = _dist_info_name()
        path = os.path.join(metadata_directory, name)
        os.makedirs(path, exist_ok=True)
        for file, text in _dist_info_files().items():
            with open(os.path.join(path, file), "w", encoding="utf-8") as f:
                f.write(text)
        return name

    def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
        project = _project()
        dist = project["name"].replace("-", "_")
        wheel_name = "%s-%s-py3-none-any.whl" % (dist, project["version"])
        records = []
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                             zipfile.ZIP_DEFLATED) as zf:
            def add(arcname, data):
                zf.writestr(arcname, data)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                records.append("%s,sha256=%s,%d" % (arcname, digest.decode(), len(data)))

            for package in _packages():
                folder = os.path.join(_ROOT, package)
                for file in sorted(os.listdir(folder)):
                    if file.endswith(".py"):
                        with open(os.path.join(folder, file), "rb") as f:
                            add(package + "/" + file, f.read())
            info = _dist_info_name()
            for file, text in _dist_info_files().items():
                add(info + "/" + file, text.encode("utf-8"))
            records.append(info + "/RECORD,,")
            zf.writestr(info + "/RECORD", "\n".join(records) + "\n")
        return wheel_name

    def _config():
        from setuptools.config.pyprojecttoml import read_configuration
        return read_configuration(os.path.join(_ROOT, "pyproject.toml"))

    def _project():
        return _config()["project"]

    def _packages():
        return _config()["tool"]["setuptools"]["packages"]

    def _dist_info_name():
        project = _project()
        return "%s-%s.dist-info" % (project["name"].replace("-", "_"), project["version"])

    def _dist_info_files():
        project = _project()
        lines = ["Metadata-Version: 2.1", "Name: " + project["name"],
                 "Version: " + project["version"]]
        if project.get("description"):
            lines.append("Summary: " + project["description"])
        if project.get("requires-python"):
            lines.append("Requires-Python: " + project["requires-python"])
        for classifier in project.get("classifiers", []):
            lines.append("Classifier: " + classifier)
        metadata = "\n".join(lines) + "\n"
        readme = os.path.join(_ROOT, "README.md")
        if os.path.exists(readme):
            with open(readme, encoding="utf-8") as f:
                metadata += "Description-Content-Type: text/markdown\n\n" + f.read()
        wheel_file = ("Wheel-Version: 1.0\nGenerator: boxline_build\nRoot-Is-Purelib: true\n"
                      "Tag: py3-none-any\n")
        return {"METADATA": metadata, "WHEEL": wheel_file, "top_level.txt":
                "\n".join(_packages()) + "\n"}
