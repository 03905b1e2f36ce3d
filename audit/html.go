package audit

import (
	"bufio"
	"fmt"
	"html/template"
	"strconv"
	"sync"

	"github.com/linkscan/linkscan/internal/termesc"
)

// htmlWriter writes one self-contained HTML page: no script, style sheet,
// font or image is loaded from anywhere; the charts are inline SVG.
type htmlWriter struct {
	w    *bufio.Writer
	st   *stats
	opts ReportOptions
}

func (h *htmlWriter) Write(r Result) error { h.st.add(r); return nil }

type svgBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type svgText struct {
	X, Y   float64
	Anchor string
	Text   string
}

type chart struct {
	ID     string
	W, H   float64
	Bars   []svgBar
	Labels []svgText
	Lines  []svgBar // grid lines, as thin rectangles
	Empty  string   // shown when there is nothing to draw
}

type statusCount struct {
	Status Status
	N      int
}

type htmlPage struct {
	Title      string
	Made       string
	Total      int
	Counts     []statusCount
	Archived   int
	Survival   chart
	Hosts      chart
	HostsShown int // hosts in the chart
	HostsAll   int // hosts with a failing or dead link
	Sections   []section
	MaxRows    int
}

// section is the list of the links of one status.
type section struct {
	Status Status
	N      int       // links of the status
	Rows   []htmlRow // those listed
	More   int       // those not listed
}

// htmlRow is a Record as the page shows it: its text escaped as the text
// formats escape it, its links as they are (html/template escapes them
// for the attribute, and refuses a scheme that is no link, javascript:).
type htmlRow struct {
	Record
	Href, FinalHref string
}

func f1(v float64) float64 { return float64(int(v*10+0.5)) / 10 }

func survivalChart(sv []yearShare) chart {
	c := chart{ID: "survival-chart", W: 760, H: 280}
	if len(sv) == 0 {
		c.Empty = "No link with a message date was checked."
		return c
	}
	left, top, plotW, plotH := 48.0, 16.0, 700.0, 220.0
	for _, p := range []int{0, 25, 50, 75, 100} {
		y := top + plotH - plotH*float64(p)/100
		c.Lines = append(c.Lines, svgBar{X: left, Y: f1(y), W: plotW, H: 0.6, Class: "grid"})
		c.Labels = append(c.Labels, svgText{X: left - 6, Y: f1(y + 4), Anchor: "end", Text: strconv.Itoa(p) + "%"})
	}
	bw := plotW / float64(len(sv))
	step := 1
	for len(sv)/step > 25 {
		step++
	}
	for i, y := range sv {
		hgt := plotH * y.Share
		x := left + float64(i)*bw
		c.Bars = append(c.Bars, svgBar{X: f1(x + bw*0.1), Y: f1(top + plotH - hgt), W: f1(bw * 0.8), H: f1(hgt), Class: "bar",
			Title: fmt.Sprintf("%d: %.0f%% work (%d of %d)", y.Year, 100*y.Share, y.Works, y.Judged)})
		if i%step == 0 {
			c.Labels = append(c.Labels, svgText{X: f1(x + bw/2), Y: top + plotH + 16, Anchor: "middle", Text: strconv.Itoa(y.Year)})
		}
	}
	return c
}

func hostsChart(hs []hostCount) chart {
	row := 22.0
	c := chart{ID: "hosts-chart", W: 760, H: 40 + row*float64(len(hs))}
	if len(hs) == 0 {
		c.H = 60
		c.Empty = "No failing or dead links."
		return c
	}
	left, top, plotW := 260.0, 10.0, 360.0
	max := 1
	for _, h := range hs {
		if n := h.Dead + h.Failing; n > max {
			max = n
		}
	}
	scale := plotW / float64(max)
	for i, h := range hs {
		y := top + float64(i)*row
		host := termesc.String(h.Host)
		name := host
		if len(name) > 38 {
			name = name[:37] + "…"
		}
		c.Labels = append(c.Labels, svgText{X: left - 8, Y: f1(y + 15), Anchor: "end", Text: name})
		dw := float64(h.Dead) * scale
		fw := float64(h.Failing) * scale
		if h.Dead > 0 {
			c.Bars = append(c.Bars, svgBar{X: left, Y: y + 3, W: f1(dw), H: row - 6, Class: "dead",
				Title: fmt.Sprintf("%s: %d dead", host, h.Dead)})
		}
		if h.Failing > 0 {
			c.Bars = append(c.Bars, svgBar{X: f1(left + dw), Y: y + 3, W: f1(fw), H: row - 6, Class: "failing",
				Title: fmt.Sprintf("%s: %d failing", host, h.Failing)})
		}
		c.Labels = append(c.Labels, svgText{X: f1(left + dw + fw + 6), Y: f1(y + 15), Anchor: "start",
			Text: fmt.Sprintf("%d dead, %d failing", h.Dead, h.Failing)})
	}
	return c
}

func (h *htmlWriter) Close() error {
	st := h.st
	// the page is text too (a terminal shows it when it is printed): the
	// text from archives is written as the text formats write it
	p := htmlPage{Title: termesc.String(h.opts.Title), Total: st.total, Archived: st.archived, MaxRows: st.max}
	for _, s := range listedStatuses {
		sec := section{Status: s, N: st.byStatus[s], More: st.more[s]}
		for _, r := range st.rows[s] {
			row := htmlRow{Record: r, Href: r.URL, FinalHref: r.FinalURL}
			row.URL, row.FinalURL = termesc.String(r.URL), termesc.String(r.FinalURL)
			row.Error, row.Path, row.MessageID = termesc.String(r.Error), termesc.String(r.Path), termesc.String(r.MessageID)
			if r.Blob != "" {
				row.Path += "#" + termesc.String(r.Blob) // a message of a git archive
			}
			sec.Rows = append(sec.Rows, row)
		}
		p.Sections = append(p.Sections, sec)
	}
	if !h.opts.Now.IsZero() {
		p.Made = h.opts.Now.UTC().Format("2006-01-02 15:04 UTC")
	}
	for _, s := range Statuses {
		p.Counts = append(p.Counts, statusCount{s, st.byStatus[s]})
	}
	p.Survival = survivalChart(st.survival())
	top := st.topHosts(20)
	p.Hosts, p.HostsShown, p.HostsAll = hostsChart(top), len(top), len(st.hosts)
	if err := pageTemplate().Execute(h.w, p); err != nil {
		return err
	}
	return h.w.Flush()
}

// pageTemplate is the page, parsed when a report is first written rather
// than when the program starts: every command of linkscan links this
// package, and the delivery-time filter runs once per message
// (docs/filter.md), so parsing it at init cost each of them ~0.1 ms.
var pageTemplate = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageSource)) })

const pageSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
.made { color: #666; margin: 0 0 16px; }
.numbers { display: flex; flex-wrap: wrap; gap: 10px; }
.numbers div { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 90px; }
.numbers b { display: block; font-size: 20px; }
.s-ok b, .s-redirected b, .s-offline-ok b { color: #1a7f37; }
.s-failing b { color: #b35900; }
.s-dead b { color: #c62828; }
.s-blocked b, .s-unchecked b { color: #555; }
svg { max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg .bar { fill: #2e7d32; }
svg .dead { fill: #c62828; }
svg .failing { fill: #f0a050; }
svg .grid { fill: #ccc; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
td.url { word-break: break-all; max-width: 420px; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Made}}<p class="made">Made {{.Made}}.</p>{{end}}
<div class="numbers" id="numbers">
<div class="s-total"><b>{{.Total}}</b>links</div>
{{range .Counts}}<div class="s-{{.Status}}"><b>{{.N}}</b>{{.Status}}</div>
{{end}}<div class="s-archived"><b>{{.Archived}}</b>archived copies</div>
</div>

<h2>Link survival by year of message date</h2>
<p>Share of the links from each year's messages that still work (links neither blocked nor unchecked).</p>
{{template "chart" .Survival}}

<h2 id="hosts">Hosts with the most dead and failing links{{if lt .HostsShown .HostsAll}} ({{.HostsShown}} of {{.HostsAll}}){{else if .HostsAll}} ({{.HostsAll}}){{end}}</h2>
<p class="legend"><span style="background:#c62828"></span>dead<span style="background:#f0a050"></span>failing</p>
{{template "chart" .Hosts}}

{{$max := .MaxRows}}{{range .Sections}}
<h2 id="{{.Status}}">{{.Status}} ({{.N}})</h2>
{{if .Rows}}<table id="{{.Status}}-links">
<thead><tr><th>status</th><th>link</th><th>{{if eq .Status "redirected"}}to{{else}}why{{end}}</th><th>message</th><th>date</th><th>archived copy</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="s-{{.Status}}"><td>{{.Status}}{{if .Failures}} ({{.Failures}} checks{{if .FailingSince}} since {{.FailingSince}}{{end}}){{end}}</td>
<td class="url"><a href="{{.Href}}" rel="noreferrer nofollow">{{.URL}}</a></td>
<td>{{if .FinalHref}}<a class="url" href="{{.FinalHref}}" rel="noreferrer nofollow">{{.FinalURL}}</a>{{if .Error}}<br>{{end}}{{end}}{{.Error}}</td>
<td>{{.Path}}{{if .MessageID}}<br>&lt;{{.MessageID}}&gt;{{end}}{{if .Line}}<br>line {{.Line}}{{end}}{{if gt .Count 1}}<br>{{.Count}} occurrences{{end}}</td>
<td>{{.Date}}</td>
<td>{{if .ArchiveURL}}<a href="{{.ArchiveURL}}" rel="noreferrer">{{.ArchiveTime}}</a> ({{.ArchiveSource}}){{end}}</td></tr>
{{end}}</tbody>
</table>
{{if .More}}<p>And {{.More}} more, not listed (the report lists {{$max}} of each status).</p>{{end}}
{{else}}<p id="{{.Status}}-none">None.</p>{{end}}{{end}}
</body>
</html>
{{define "chart"}}<svg id="{{.ID}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img">
{{range .Lines}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"></rect>
{{end}}{{range .Bars}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Labels}}<text x="{{.X}}" y="{{.Y}}" text-anchor="{{.Anchor}}">{{.Text}}</text>
{{end}}{{if .Empty}}<text x="20" y="30">{{.Empty}}</text>{{end}}</svg>
{{end}}`
