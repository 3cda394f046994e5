package manifest

import "testing"

// TestCodeCapability_Rules16: a conftest.py or build.rs change is reported
// when what it adds can reach beyond the test or the build — a process,
// the network, a file written, the environment, code loaded — including
// through a name the file binds from a capable module; a plain fixture and
// a cargo: directive are not.
func TestCodeCapability_Rules16(t *testing.T) {
	base := "import pytest\nfrom subprocess import run as sh\n\n@pytest.fixture\ndef seed():\n    return 42\n"
	for _, c := range []struct {
		f, before, after string
		want             bool
	}{
		{"conftest.py", base, base + "\n@pytest.fixture\ndef count():\n    return 4\n", false},
		{"conftest.py", base, base + "\n@pytest.fixture\ndef net():\n    sh(['curl', 'https://x.example'])\n", true},
		{"conftest.py", base, base + "\nimport os\n", true},
		{"conftest.py", base, base + "\ndef pytest_configure(config):\n    pass\n", true},
		{"conftest.py", base, base + "\n@pytest.fixture\ndef tok():\n    return __import__('o'+'s').environ\n", true},
		{"build.rs", "fn main() {\n}\n", "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\n", false},
		{"build.rs", "fn main() {\n}\n", "fn main() {\n    std::process::Command::new(\"sh\").status().unwrap();\n}\n", true},
		{"build.rs", "fn main() {\n}\n", "fn main() {\n    let t = std::env::var(\"GITHUB_TOKEN\");\n}\n", true},
		{"build.rs", "fn main() {\n}\n", "fn main() {\n    let out = std::env::var(\"OUT_DIR\").unwrap();\n}\n", false},
	} {
		var before []byte
		if c.before != "" {
			before = []byte(c.before)
		}
		got, err := diffCode(c.f, c.f, before, []byte(c.after))
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) > 0) != c.want {
			t.Errorf("%s %q: reported %v, want %v", c.f, c.after[len(c.before):], got, c.want)
		}
	}
}
