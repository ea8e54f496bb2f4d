"""A credential never reaches the saved warehouse URL, with or without the Spark extra."""
import subprocess
import sys

from explorer.core.redact import redact_url


def test_redact_url_drops_every_credential_field():
    assert redact_url("sc://h:15002;token=abc;user_id=me;Password=x") == "sc://h:15002;user_id=me"
    assert redact_url(None) == ""


def test_the_dialog_redacts_without_the_spark_extra():
    code = ("import sys; sys.modules['sqlglot'] = None; sys.modules['pyspark'] = None\n"
            "from explorer.widgets.warehouse import _redact\n"
            "print(_redact('sc://h:1;token=abc'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "sc://h:1"
