// itergraph view: lays out each loop body with dagre, places port-map captions by their
// measured size, grows every SVG's viewBox to fit, and (with ?check=1) reports overlapping
// or cut text boxes in <pre id="layout-check">.
(function(){
var NS='http://www.w3.org/2000/svg';
function el(tag,attrs,parent){var e=document.createElementNS(NS,tag);
  for(var k in attrs)e.setAttribute(k,attrs[k]); if(parent)parent.appendChild(e); return e;}
function drawBody(svg){
  var data=JSON.parse(svg.getAttribute('data-graph')), g=new dagre.graphlib.Graph({multigraph:true});
  g.setGraph({rankdir:'TB',nodesep:18,ranksep:28,marginx:6,marginy:6}); g.setDefaultEdgeLabel(function(){return {};});
  var groups={};
  data.nodes.forEach(function(n){
    var grp=el('g',{'class':'gnode '+n.kind,'data-id':n.id},svg), lines=[];
    if(n.op)lines.push([n.op,'op']); if(n.name)lines.push([n.name,n.kind==='op'||n.kind==='loop'||n.kind==='sub'?'nname':'tensor']);
    var w=0,h=4,texts=[];
    lines.forEach(function(l){var t=el('text',{'class':l[1],x:0,y:0},grp); t.textContent=l[0];
      if(l[1]==='tensor')t.setAttribute('data-name',l[0]);
      var b=t.getBBox(); texts.push([t,b]); w=Math.max(w,b.width); h+=b.height+2;});
    w+=16; h+=4; groups[n.id]=[grp,texts,w,h,n.kind];
    g.setNode(n.id,{width:w,height:h});
  });
  data.edges.forEach(function(e,i){g.setEdge(e.from,e.to,{},'e'+i);});
  dagre.layout(g);
  g.nodes().forEach(function(id){var nd=g.node(id),it=groups[id],x=nd.x-it[2]/2,y=nd.y-it[3]/2;
    var shape=it[4]==='value'||it[4]==='result'?el('ellipse',{cx:nd.x,cy:nd.y,rx:it[2]/2+4,ry:it[3]/2}):
      el('rect',{x:x,y:y,width:it[2],height:it[3],rx:4});
    shape.setAttribute('class','shape'); it[0].insertBefore(shape,it[0].firstChild);
    var ty=y+4; it[1].forEach(function(tb){var t=tb[0],b=tb[1];
      t.setAttribute('x',nd.x); t.setAttribute('text-anchor','middle'); t.setAttribute('y',ty-b.y); ty+=b.height+2;});});
  g.edges().forEach(function(e){var pts=g.edge(e).points, d='M'+pts.map(function(p){return p.x.toFixed(1)+','+p.y.toFixed(1);}).join(' L');
    var p=el('path',{'class':'gedge',d:d,'marker-end':'url(#garrow)'}); svg.insertBefore(p,svg.firstChild);});
  el('path',{d:'M0,0 L10,5 L0,10 z',fill:'#777'},el('marker',{id:'garrow',viewBox:'0 0 10 10',refX:9,refY:5,markerWidth:6,markerHeight:6,orient:'auto'},el('defs',{},svg)));
}
function placeControls(svg){
  var groups=svg.querySelectorAll('g.control'), w=0;
  groups.forEach(function(g){var l=g.querySelector('text.label'); if(l)w=Math.max(w,l.getBBox().width);});
  groups.forEach(function(g){var v=g.querySelector('text.tensor'),l=g.querySelector('text.label');
    if(v&&l)v.setAttribute('x',(+l.getAttribute('x'))+w+10);});
}
function fit(svg){
  var b=svg.getBBox(), x0=Math.min(0,b.x-4), y0=Math.min(0,b.y-4);
  var vb=svg.viewBox.baseVal, w0=vb&&vb.width?vb.x+vb.width:0, h0=vb&&vb.height?vb.y+vb.height:0;
  var x1=Math.max(w0,b.x+b.width+4), y1=Math.max(h0,b.y+b.height+4);
  svg.setAttribute('viewBox',x0+' '+y0+' '+(x1-x0)+' '+(y1-y0));
  svg.setAttribute('width',x1-x0); svg.setAttribute('height',y1-y0);
}
function layout(){
  document.querySelectorAll('details').forEach(function(d){d.setAttribute('data-was',d.open?'1':'0'); d.open=true;});
  document.querySelectorAll('svg.bodygraph').forEach(function(s){try{drawBody(s);}catch(e){s.setAttribute('data-error',String(e));}});
  document.querySelectorAll('svg.portmap').forEach(placeControls);
  document.querySelectorAll('svg').forEach(fit);
  if(new URLSearchParams(location.search).get('check'))check();
  document.querySelectorAll('details').forEach(function(d){d.open=d.getAttribute('data-was')==='1'; d.removeAttribute('data-was');});
}
function check(){
  var out=[], n=0;
  document.querySelectorAll('svg').forEach(function(svg,si){
    var r=svg.getBoundingClientRect(), boxes=[];
    svg.querySelectorAll('text').forEach(function(t){if(!t.textContent.trim())return; var b=t.getBoundingClientRect(); n++;
      boxes.push([t,b]);
      if(b.left<r.left-0.5||b.top<r.top-0.5||b.right>r.right+0.5||b.bottom>r.bottom+0.5)out.push('cut svg'+si+': '+t.textContent);});
    for(var i=0;i<boxes.length;i++)for(var j=i+1;j<boxes.length;j++){var a=boxes[i][1],c=boxes[j][1];
      if(a.left<c.right-0.5&&c.left<a.right-0.5&&a.top<c.bottom-0.5&&c.top<a.bottom-0.5)
        out.push('overlap svg'+si+': '+boxes[i][0].textContent+' | '+boxes[j][0].textContent);}
  });
  var pre=document.createElement('pre'); pre.id='layout-check'; pre.setAttribute('data-texts',String(n));
  pre.setAttribute('data-problems',String(out.length)); pre.textContent=out.join('\n'); document.body.appendChild(pre);
}
layout();
})();
