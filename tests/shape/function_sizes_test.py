#!/usr/bin/env python3
"""tests/function_sizes.py against sources whose function sizes are known.

Usage: function_sizes_test.py PATH_TO_function_sizes.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "function_sizes.py")


def lines(n, text="  x += 1;"):
    return "\n".join([text] * n)


def measure(limit, source):
    """function_sizes.py's output lines for SOURCE at LIMIT, path-less."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.cc")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        out = subprocess.run([sys.executable, SCRIPT, str(limit), path],
                             capture_output=True, text=True, check=True)
        return [l.replace(path, "f.cc") for l in out.stdout.splitlines()]


class FunctionSizes(unittest.TestCase):

    def test_counts_from_the_opening_brace_to_the_closing_one(self):
        # The signature's lines do not count: the body is lines 3 to 13.
        src = "int F(int a,\n      int b)\n{\n" + lines(9) + "\n  return a;\n}\n"
        self.assertEqual(measure(9, src), ["f.cc:1: function 'F', 11 lines"])
        self.assertEqual(measure(11, src), [])

    def test_braces_in_comments_and_literals_are_not_code(self):
        src = ("void G() {\n" + lines(3, "  // }}} {") + "\n"
               '  const char* s = "}}";\n'
               '  auto r = R"x(}\n}\n)x";\n'
               "  char c = '}';\n  int n = 1'000'000;\n"
               "  /* }\n  } */\n}\n"
               "void H() {\n}\n")
        self.assertEqual(measure(5, src), ["f.cc:1: function 'G', 12 lines"])

    def test_a_constructor_with_braced_initialisers_counts_its_body(self):
        src = ("struct S { S(int x); int v_; int w_; };\n"
               "S::S(int x)\n    : v_{x},\n      w_{1} {\n" + lines(20) +
               "\n}\n")
        self.assertEqual(measure(20, src), ["f.cc:2: function 'S', 21 lines"])

    def test_members_defined_in_a_class_and_lambdas_inside_a_function(self):
        src = ("class C {\n public:\n  int Get() const {\n" + lines(30) +
               "\n    return 1;\n  }\n};\n"
               "void L() {\n  auto f = [](int a) {\n" + lines(30) +
               "\n    return a;\n  };\n}\n")
        self.assertEqual(measure(25, src), [
            "f.cc:3: function 'Get', 32 lines",
            "f.cc:37: function 'L', 34 lines",
        ])


if __name__ == "__main__":
    unittest.main()
