package web

import "strings"

// browsers are the User-Agent tokens of the common browsers, in the order
// they must be tried: Edge, Opera and Samsung Internet also say Chrome and
// Safari, Chrome also says Safari. A version follows the token's "/";
// Safari's is in "Version/".
var browsers = []struct{ token, name string }{
	{"Edg/", "Edge"}, {"EdgA/", "Edge"}, {"EdgiOS/", "Edge"},
	{"OPR/", "Opera"}, {"SamsungBrowser/", "Samsung Internet"},
	{"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"},
	{"HeadlessChrome/", "Headless Chrome"}, {"CriOS/", "Chrome"}, {"Chromium/", "Chromium"}, {"Chrome/", "Chrome"},
	{"Version/", "Safari"},
}

// systems are the operating systems' tokens, tried in order (an iPhone and
// Android also say Linux or Mac OS X).
var systems = []struct{ token, name string }{
	{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"CrOS", "ChromeOS"},
	{"Windows", "Windows"}, {"Macintosh", "macOS"}, {"Mac OS X", "macOS"}, {"Linux", "Linux"},
}

// browserName returns a short, readable name of the browser a User-Agent
// header describes, such as "Firefox 128 on Linux" or "Safari 17 on
// iPhone": the browser, its major version and the system, whichever are
// known. Another client shows as its first product token ("curl 8").
func browserName(ua string) string {
	name := ""
	for _, b := range browsers {
		if i := strings.Index(ua, b.token); i >= 0 {
			name = joinName(b.name, majorVersion(ua[i+len(b.token):]))
			break
		}
	}
	if name == "" {
		fields := strings.Fields(ua)
		if len(fields) == 0 || strings.HasPrefix(ua, "Mozilla/") {
			return "Unknown browser"
		}
		product, version, _ := strings.Cut(fields[0], "/")
		if !readableProduct(product) {
			return "Unknown browser"
		}
		name = joinName(product, majorVersion(version))
	}
	for _, s := range systems {
		if strings.Contains(ua, s.token) {
			return name + " on " + s.name
		}
	}
	return name
}

func joinName(name, version string) string {
	if version == "" {
		return name
	}
	return name + " " + version
}

// majorVersion returns the leading digits of a version ("128.0.1" -> "128").
func majorVersion(s string) string {
	n := 0
	for n < len(s) && n < 6 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return s[:n]
}

// readableProduct reports whether a product token is worth showing: 1 to 30
// letters, digits, dots, dashes or underscores.
func readableProduct(s string) bool {
	if s == "" || len(s) > 30 {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_'
		if !ok {
			return false
		}
	}
	return true
}
