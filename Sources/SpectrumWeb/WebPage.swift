/// The web view: one self-contained page (HTML, CSS and JavaScript, no external request).
enum WebPage {
    static let html = #"""
<!doctype html><title>spectrum</title>
"""#
}
